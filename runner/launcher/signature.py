"""A Python solution's parameters against the problem's signature, checked before any case runs.

The arena calls `solution` positionally, in the problem's ABI order, so names may differ freely. What cannot work
is caught here with one line naming the expected `solution(...)`: a parameter count no positional call of that
many arguments fits, a keyword-only parameter without a default, or the expected names in another order that
moves one of them to a parameter of another role (a tensor where the problem passes a number, an input where it
passes the output). A swap within one role (two inputs) can be honest, as in a commutative operation: it is left
to the tests. A call that still fails on an argument's type is explained with the expected signature too
(`type_error_message`), rather than with the harness's traceback.
"""

from __future__ import annotations

import inspect
import re
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runner.errors import SignatureMismatchError

if TYPE_CHECKING:
    from problems.base import DType, Problem


def expected_signature(problem: Problem, dtype: DType) -> str:
    """`solution(input_a: torch.Tensor, ..., n: int)`: the Python starter's line for this problem."""
    from problems.starter import generate_starter

    starter = generate_starter(problem, "python", dtype if dtype in problem.dtypes else problem.dtypes[0])
    line = next(line for line in starter.splitlines() if line.startswith("def solution"))
    return line.removeprefix("def ").rstrip(":").removesuffix(" -> None")


def _found(parameters: list[inspect.Parameter]) -> str:
    names = []
    for p in parameters:
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "")
        names.append(prefix + p.name + ("=…" if p.default is not p.empty else ""))
    return f"solution({', '.join(names)})"


def check_signature(fn: Callable[..., Any], problem: Problem, dtype: DType) -> None:
    """Raise SignatureMismatchError when `fn` cannot be called positionally with the problem's arguments."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return  # no signature to read (a builtin, an extension's callable): the call itself will tell
    expected = problem.ordered_parameters()
    wanted = expected_signature(problem, dtype)
    kind = inspect.Parameter
    positional = [p for p in parameters if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD)]
    takes_more = any(p.kind is kind.VAR_POSITIONAL for p in parameters)
    required = [p for p in positional if p.default is p.empty]
    keyword_only = [p.name for p in parameters if p.kind is kind.KEYWORD_ONLY and p.default is p.empty]
    found = _found(parameters)
    if keyword_only:
        raise SignatureMismatchError(
            f"Expected {wanted}, called positionally; found {found}, whose keyword-only "
            f"{', '.join(keyword_only)} would get no value."
        )
    if len(required) > len(expected) or (len(positional) < len(expected) and not takes_more):
        count = f"{len(required)}" if len(required) == len(positional) else f"{len(required)} to {len(positional)}"
        raise SignatureMismatchError(
            f"Expected {wanted}: {len(expected)} parameters, called positionally; found {found}, which takes {count}."
        )
    names = [p.name for p in positional[: len(expected)]]
    roles = {p.name: p.role for p in expected}
    if sorted(names) == sorted(roles) and any(
        roles[name] != param.role for name, param in zip(names, expected, strict=False)
    ):
        raise SignatureMismatchError(
            f"Expected {wanted}, called positionally in this order; found {found}: the same names in another order."
        )


# How Python and torch word a value of the wrong kind: `'int' object has no attribute 'copy_'`, `argument 'other'
# must be Tensor, not int`, `expected Tensor ... but got float`.
_TYPE_WORDING = re.compile(r"'(?:int|float|bool|Tensor|NoneType)' object|\b(?:not|got) (?:int|float|Tensor)\b")


def type_error_message(exc: BaseException, signature: str) -> str | None:
    """The message for a call that failed on an argument's type, naming the expected signature; None when the
    error is of another kind."""
    from runner.launcher.harness import BadReturnError

    if not isinstance(exc, TypeError | AttributeError) or isinstance(exc, BadReturnError):
        return None
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not _TYPE_WORDING.search(first):
        return None
    return (
        f"{type(exc).__name__}: {first}. An argument is not of the kind the code expects: the arena calls "
        f"{signature}, positionally in this order."
    )


def submission_frames(exc: BaseException, file_name: str) -> str | None:
    """The traceback's frames in the submission's own file, without the harness's; None when it has none."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(f"/{file_name}")]
    if not frames:
        return None
    lines = traceback.format_list(frames)
    return "Traceback (the submission's frames):\n" + "".join(lines) + f"{type(exc).__name__}: {exc}"
