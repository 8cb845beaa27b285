"""The process Nsight Compute profiles (mode `profile`): one call of the submission on one test case.

Started by `runner.profiling.collect` under ncu, in the job's sandbox, as the launcher is: it loads the submission
the same way and sees the same public request (no seed). Its inputs come from a fixed public seed: a profile is
never ranked, so there is nothing to keep secret, and the judge's data never reaches this process.

The call runs twice: once to pay its one-off costs (lazy module loading, autotuning, first touches), then once
inside the NVTX range that ncu is told to profile, so neither input generation nor the warm-up is in the report.

    python -m runner.launcher.profiled_call --request FILE --case N --workdir DIR [--prebuilt-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# ncu profiles only the kernels launched inside this push/pop range (`--nvtx --nvtx-include arena-profile/`).
NVTX_RANGE = "arena-profile"
# The first words of the line this process writes when the call fails; the collector reports that line.
FAILURE = "The solution failed while being profiled"
# The inputs of a profile: any fixed seed will do, as nothing about a profile is ranked or checked.
PUBLIC_SEED = 20261125


def run_profiled_call(request_file: Path, case_index: int, workdir: Path) -> None:
    import torch

    from contract.wire import JobRequest
    from problems.inputs import torch_dtype
    from runner.launcher.loader import load_solution
    from runner.problem_lookup import resolve_problem

    request = JobRequest.model_validate_json(request_file.read_text(encoding="utf-8"))
    problem = resolve_problem(request)
    solution = load_solution(request, problem, workdir, "gpu")
    case = problem.generate_test_cases(request.dtype, "gpu")[case_index]
    generator = torch.Generator(device="cuda").manual_seed(PUBLIC_SEED)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](generator))
    extras = problem.get_extra_params(case)
    # The reference gives the outputs' shapes; its kernels run before the range, so ncu skips them.
    expected = problem.reference_outputs(inputs, extras)
    outputs = [
        torch.empty(tuple(e.shape), dtype=torch_dtype(element), device="cuda")
        for e, element in zip(expected, problem.output_elements(request.dtype), strict=True)
    ]
    call = solution.bind(problem, inputs, outputs, extras, "cuda")
    call()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(NVTX_RANGE)
    call()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.launcher.profiled_call")
    parser.add_argument("--request", type=Path, required=True, help="the public request (no seed)")
    parser.add_argument("--case", type=int, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--prebuilt-dir", type=Path, help="the library the runner's own nvcc step built")
    args = parser.parse_args(argv)
    from runner.host.compile import use_prebuilt

    use_prebuilt(args.prebuilt_dir)
    try:
        run_profiled_call(args.request, args.case, args.workdir)
    except Exception as exc:  # the collector reports this to the user as the profile's failure
        sys.stderr.write(f"{FAILURE}: {type(exc).__name__}: {exc}\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
