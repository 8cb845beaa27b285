"""A Python solution whose parameters cannot take the problem's arguments is stopped before any case runs, with
one line naming the expected `solution(...)`; a call that fails on an argument's type shows that signature
instead of the harness's traceback. Honest solutions with other names, defaults or `*args` still pass: a false
rejection is the worst bug. The verdicts go through the real sandboxed judge and launcher."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from contract.wire import SubmissionResult
from problems.registry import builtin_problems, get_problem
from runner.errors import SignatureMismatchError
from runner.host.executor import Executor
from runner.job.run import run_job
from runner.launcher.signature import check_signature, expected_signature
from tests.honest.corpus import HONEST_SUBMISSIONS, PATTERNS
from tests.problems.selfcheck import load_python, solution_path
from tests.runner.conftest import job_request, settings_for

# vector_add (`vector-addition`) is called as solution(d_input1, d_input2, d_output, n).
EXPECTED = "solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int)"

TOO_FEW = """
def solution(d_input1, d_output):
    d_output.copy_(d_input1)
"""

REORDERED = """
def solution(d_output, d_input1, d_input2, n):
    d_output.copy_(d_input1 + d_input2)
"""

# Other names, in an order that passes an int where the code wants a tensor: only the call can tell.
WRONG_KIND = """
def solution(n, a, b, out):
    out.copy_(a + b)
"""


@pytest.fixture
async def executor(state_dir: Path) -> Executor:
    return await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))


async def _run(executor: Executor, source: str) -> SubmissionResult:
    return await run_job(job_request(source), executor=executor)


async def test_a_different_parameter_count_is_refused_before_any_case(executor: Executor) -> None:
    result = await _run(executor, TOO_FEW)
    assert result.error is not None and result.error.code == "signature_mismatch", result.error
    assert result.tests == []
    message = result.error.message
    assert "\n" not in message
    assert EXPECTED in message and "found solution(d_input1, d_output), which takes 2" in message


async def test_the_expected_names_in_another_order_are_refused(executor: Executor) -> None:
    result = await _run(executor, REORDERED)
    assert result.error is not None and result.error.code == "signature_mismatch", result.error
    assert result.tests == []
    assert EXPECTED in result.error.message
    assert "found solution(d_output, d_input1, d_input2, n): the same names in another order" in result.error.message


async def test_a_call_failing_on_an_arguments_type_shows_the_expected_signature(executor: Executor) -> None:
    result = await _run(executor, WRONG_KIND)
    assert result.error is not None and result.error.code == "runtime_error", result.error
    message = result.error.message
    assert "'int' object has no attribute 'copy_'" in message and EXPECTED in message, message
    # The submission's own frame, and none of the harness's.
    log = result.error.log or ""
    assert "submission.py" in log and "runner/launcher" not in log and "harness" not in log, log


vector_add = builtin_problems()["vector-addition"]


@pytest.mark.parametrize(
    "solution",
    [
        lambda x, y, out, size: None,
        lambda d_input1, d_input2, d_output, n, alpha=1.0: None,
        lambda *args: None,
        lambda a, *rest, **options: None,
        lambda d_input2, d_input1, d_output, n: None,  # a swap of two inputs: honest for a commutative sum
        lambda a, b, c, n, *, scale=2.0: None,
    ],
    ids=["renamed", "defaulted_extra", "varargs", "one_and_rest", "inputs_swapped", "keyword_only_default"],
)
def test_signatures_that_can_take_the_call_pass(solution: object) -> None:
    check_signature(solution, vector_add, "float32")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "solution",
    [
        lambda a, b, c: None,
        lambda a, b, c, n, extra: None,
        lambda a, b, c, *, n: None,
        lambda n, d_input1, d_input2, d_output: None,
    ],
    ids=["too_few", "too_many", "keyword_only", "scalar_first"],
)
def test_signatures_that_cannot_take_the_call_are_refused(solution: object) -> None:
    with pytest.raises(SignatureMismatchError, match=r"Expected solution\(d_input1: torch.Tensor"):
        check_signature(solution, vector_add, "float32")  # type: ignore[arg-type]


def test_every_library_solution_and_honest_entry_passes_the_check() -> None:
    """The check against every Python solution the project wrote: none may be refused."""
    problems = builtin_problems()
    checked = 0
    for problem in problems.values():
        for broken in (False, True):  # a broken solution is wrong in its output, never in its signature
            path = solution_path(problem, "python", broken)
            if path.exists():
                check_signature(load_python(path), problem, problem.dtypes[0])
                checked += 1
    for file, slug, _devices, _what in PATTERNS:
        if file.endswith(".py") and "triton" not in file and "cupy" not in file:
            problem = get_problem(slug)
            check_signature(load_python(HONEST_SUBMISSIONS / file), problem, problem.dtypes[0])
            checked += 1
    assert checked > 50


def test_the_expected_signature_is_the_python_starters() -> None:
    assert expected_signature(vector_add, "float32") == EXPECTED
