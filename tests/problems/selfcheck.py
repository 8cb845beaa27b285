"""Runs a solution directly on a problem's cases: the library's own proof that each problem is solvable.

This calls the solution in this process, with none of the judge's isolation or timing, so it is only for code
the project itself wrote (the honest and broken solutions under `tests/problems/solutions`). Submissions go
through the runner. It lives beside those solutions, among the tests, since it loads CUDA libraries with the
launcher's loader: `problems/` itself imports nothing of the runner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from problems.base import DeviceKind, DType, Problem, TestCase
from problems.verification import describe_mismatch, poison
from runner.launcher.loader import load_cuda_solution

if TYPE_CHECKING:
    import torch

SOLUTIONS_DIR = Path(__file__).resolve().parent / "solutions"
SEED = 20261124


@dataclass
class CaseResult:
    name: str
    passed: bool
    message: str
    seconds: float | None = None
    flops: int = 0
    bytes: int = 0


@dataclass
class CheckResult:
    slug: str
    dtype: str
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(c.passed for c in self.cases)


def family(problem: Problem) -> str:
    """The family folder of a built-in problem (`matmul` for `problems.builtin.matmul.square_matmul`)."""
    parts = type(problem).__module__.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["problems", "builtin"] else "misc"


def solution_path(problem: Problem, language: str, broken: bool = False) -> Path:
    """Where the library's honest (or deliberately broken) solution of `problem` lives."""
    stem = problem.slug.replace("-", "_") + ("_broken" if broken else "")
    return SOLUTIONS_DIR / family(problem) / f"{stem}.{'cu' if language == 'cuda' else 'py'}"


def load_python(path: Path) -> Callable[..., Any]:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"selfcheck_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.solution  # type: ignore[no-any-return]


def case_inputs(
    problem: Problem, case: TestCase, device: str, seed: int
) -> tuple[tuple[torch.Tensor, ...], list[Any], tuple[torch.Tensor, ...]]:
    """Inputs drawn from `seed`, the extra values, and the reference outputs: what the judge prepares."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](gen))
    extras = problem.get_extra_params(case)
    return inputs, extras, problem.reference_outputs(inputs, extras)


def output_buffers(problem: Problem, dtype: DType, expected: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Poisoned output buffers of the reference's shapes and the outputs' element types."""
    import torch

    from problems.inputs import torch_dtype

    buffers = []
    for exp, element in zip(expected, problem.output_elements(dtype), strict=True):
        buf = torch.empty(exp.shape, dtype=torch_dtype(element), device=exp.device)
        poison(buf)
        buffers.append(buf)
    return buffers


def check_solution(
    problem: Problem,
    call: Callable[[list[Any]], object],
    dtype: DType,
    device_kind: DeviceKind,
    *,
    time_it: bool = False,
    stop_at_first_failure: bool = False,
) -> CheckResult:
    """Run `call(arguments)` on every case of `device_kind` and verify each output against the reference.

    `call` receives the arguments in ABI order, constant arrays already made device tensors.
    """
    import torch

    from problems.inputs import constant_arrays

    device = "cuda" if device_kind == "gpu" else "cpu"
    result = CheckResult(problem.slug, dtype)
    for index, case in enumerate(problem.generate_test_cases(dtype, device_kind)):
        inputs, extras, expected = case_inputs(problem, case, device, SEED + index)
        outputs = output_buffers(problem, dtype, expected)
        args = problem.arguments(inputs, outputs, constant_arrays(problem, extras, device))
        try:
            call(args)
            if device == "cuda":
                torch.cuda.synchronize()
        except Exception as exc:  # a broken solution may raise; that is a failure, not an error of the check
            result.cases.append(CaseResult(case["name"], False, f"raised {type(exc).__name__}: {exc}"))
            if stop_at_first_failure:
                break
            continue
        message, passed = "passed", True
        for exp, actual in zip(expected, outputs, strict=True):
            ok, details = problem.verify_result(exp, actual, dtype)
            if not ok:
                message, passed = describe_mismatch(details), False
                break
        seconds = _time_call(call, args) if time_it and passed and device == "cuda" else None
        result.cases.append(
            CaseResult(case["name"], passed, message, seconds, problem.get_flops(case), problem.get_bytes(case, dtype))
        )
        if stop_at_first_failure and not passed:
            break
    return result


def _time_call(call: Callable[[list[Any]], object], args: list[Any], repeats: int = 20) -> float:
    """Median seconds of one call by CUDA events: a table's rough figure, not the judge's measurement."""
    import statistics

    import torch

    call(args)
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call(args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def python_call(path: Path) -> Callable[[list[Any]], object]:
    fn = load_python(path)
    return lambda args: fn(*args)


def cuda_call(library: Path, problem: Problem, dtype: DType) -> Callable[[list[Any]], object]:
    solution = load_cuda_solution(library, problem, dtype)
    return solution.call
