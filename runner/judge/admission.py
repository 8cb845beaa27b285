"""The admission self-test of a problem module, run inside a sandboxed worker (DESIGN §6).

A problem is admitted when, on every test case, its reference passes its own `verify_result`, and obviously
wrong outputs (all zeros, a constant, a copy of an input) fail it. Run as
`python -m runner.judge.admission --request FILE --report-fd N`; the ValidateReport goes to fd N as one JSON line.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract.wire import ErrorInfo, ValidateCheck, ValidateReport, ValidateRequest
from runner.errors import trim_log

if TYPE_CHECKING:
    import torch

    from problems.base import Problem, TestCase

ADMISSION_SEED = 20260101
CONSTANT_VALUE = 1.0

Outputs = tuple["torch.Tensor", ...]


def _verdict(
    problem: Problem, name: str, check: str, expect: str, expected: Outputs, actual: Outputs, dtype: str
) -> ValidateCheck:
    from problems.verification import describe_mismatch

    passed, details = True, {}
    for exp, act in zip(expected, actual, strict=True):
        passed, details = problem.verify_result(exp, act, dtype)  # type: ignore[arg-type]
        if not passed:
            break
    ok = passed == (expect == "pass")
    if ok:
        message = "passed, as it should" if passed else "rejected, as it should be"
    elif expect == "pass":
        message = f"the reference fails its own verification: {describe_mismatch(details)}"
    else:
        message = f"an obviously wrong output ({check}) passed verification: tighten verify_result or the tolerance"
    return ValidateCheck(case=name, check=check, expect=expect, ok=ok, message=message)  # type: ignore[arg-type]


def _wrong_outputs(inputs: Sequence[torch.Tensor], reference: Outputs) -> list[tuple[str, Outputs]]:
    """Obviously wrong candidates: zeros, a constant, and each input copied into an output of its size."""
    import torch

    wrong: list[tuple[str, Outputs]] = [
        ("zeros", tuple(torch.zeros_like(r) for r in reference)),
        ("constant", tuple(torch.full_like(r, CONSTANT_VALUE) for r in reference)),
    ]
    for tensor in inputs:
        if not any(r.numel() == tensor.numel() for r in reference):
            continue
        copied = tuple(
            tensor.reshape(r.shape).to(r.dtype) if r.numel() == tensor.numel() else r.clone() for r in reference
        )
        wrong.append(("copy_input", copied))
    return wrong


def check_case(problem: Problem, case: TestCase, index: int, dtype: str, device: str) -> list[ValidateCheck]:
    import torch

    from problems.inputs import torch_dtype

    name = case["name"]
    generator = torch.Generator(device=device).manual_seed(ADMISSION_SEED + index)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](generator))
    expected = problem.reference_outputs(inputs, problem.get_extra_params(case))
    elements = problem.output_elements(dtype)  # type: ignore[arg-type]
    # What a correct solution would write: the reference values rounded to the output dtype.
    reference = tuple(e.to(torch_dtype(element)) for e, element in zip(expected, elements, strict=True))
    checks = [_verdict(problem, name, "reference", "pass", expected, reference, dtype)]
    for check, outputs in _wrong_outputs(inputs, reference):
        checks.append(_verdict(problem, name, check, "fail", expected, outputs, dtype))
    flops = problem.get_flops(case)
    flops_ok = isinstance(flops, int) and flops > 0
    flops_message = f"{flops} FLOPs" if flops_ok else f"get_flops returned {flops!r}; it must be a positive int"
    checks.append(ValidateCheck(case=name, check="flops", expect="pass", ok=flops_ok, message=flops_message))
    return checks


def _error(code: str, message: str, log: str | None = None, **fields: Any) -> ValidateReport:
    info = ErrorInfo(code=code, message=message, log=trim_log(log) if log else None)  # type: ignore[arg-type]
    return ValidateReport(ok=False, error=info, **fields)


def validate(request: ValidateRequest) -> ValidateReport:
    """Load the module and run every check; errors in the module become a report, never an exception."""
    import torch

    from problems.registry import load_problem_source

    try:
        problem = load_problem_source(request.problem_source, module_name="arena_admission")
    except Exception as exc:
        return _error("import_error", f"The problem module could not be loaded: {exc}", traceback.format_exc())
    gpu = torch.cuda.is_available() and request.device_kind != "cpu"
    if request.device_kind == "gpu" and not gpu:
        return _error("no_gpu", "The admission test asked for a GPU, and this runner has none.")
    device = torch.cuda.get_device_name() if gpu else f"CPU ({platform.machine()})"
    meta = {"slug": problem.slug, "title": problem.title, "version": problem.version, "device": device}
    if request.dtype not in problem.dtypes:
        return _error("unsupported_dtype", f"{problem.slug} does not list {request.dtype} in its dtypes.", **meta)
    checks: list[ValidateCheck] = []
    try:
        cases = problem.generate_test_cases(request.dtype, "gpu" if gpu else "cpu")
        if not cases:
            return _error("bad_request", "generate_test_cases returned no test cases.", **meta)
        for index, case in enumerate(cases):
            checks += check_case(problem, case, index, request.dtype, "cuda" if gpu else "cpu")
    except Exception as exc:
        log = traceback.format_exc()
        return _error("runtime_error", f"The problem module raised {type(exc).__name__}: {exc}", log, **meta)
    return ValidateReport(ok=all(c.ok for c in checks), checks=checks, **meta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.judge.admission")
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--report-fd", type=int, required=True)
    args = parser.parse_args(argv)
    os.set_inheritable(args.report_fd, False)
    request = ValidateRequest.model_validate_json(args.request.read_text(encoding="utf-8"))
    report = validate(request)
    with os.fdopen(args.report_fd, "w", encoding="utf-8") as pipe:
        pipe.write(report.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
