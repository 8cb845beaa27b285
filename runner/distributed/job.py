"""One distributed job inside the job's sandbox: runs the harness at the job's world size and writes the job's
`SubmissionResult` as one JSON line to the runner.

Run by the daemon (runner/job/distributed.py) as `runner.distributed.job`, in a sandboxed process of the job's own;
the harness then starts the rank processes beside it, in the same sandbox. This process is the judge of the run: it
draws the inputs, keeps the expected outputs and gives the verdict, so it is never the process that loads the
submission (the ranks are). The result is one line so that the host reads it exactly as it reads a result from the
one-device judge, and a rank that prints cannot forge it (the ranks' stdout goes nowhere, their stderr to the harness).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import statistics
import sys
from pathlib import Path

from contract.wire import CaseTiming, ErrorInfo, JobRequest, SubmissionResult, TestOutcome, arithmetic_mean
from contract.wire import geometric_mean as geomean
from problems.distributed.base import DistributedCase, DistributedProblem
from problems.distributed.registry import get_distributed_problem
from runner.distributed.harness import CaseRun, DistributedRun, run_distributed
from runner.host.devices import ranks_device_name

# The samples of a benchmark, after one warm-up: the job's `min_samples`, within these bounds. The CPU harness takes
# a fixed count (the one-device convergence rule is not applied per rank yet), and every rank's process holds every
# sample's inputs, so the count is kept small.
MAX_SAMPLES = 100
SEED_BITS = 48  # the harness adds per-case, per-sample and per-rank strides to the seed: room below 2**63


def sample_count(request: JobRequest) -> tuple[int, int]:
    """(samples, warm-up) for the job's mode: a test verifies one call per rank; a benchmark times `min_samples`."""
    if request.mode == "test":
        return 1, 0
    return max(1, min(request.measure.min_samples, request.measure.max_samples, MAX_SAMPLES)), 1


def case_outcomes(problem: DistributedProblem, cases: list[DistributedCase], run: DistributedRun) -> list[TestOutcome]:
    """One outcome per case that ran: passed, or the first failing rank's output by name, with the ranks that
    failed (a case after a rank stopped has no outcome: the rank's error says why)."""
    outcomes = []
    for index, (case, ran) in enumerate(zip(cases, run.cases, strict=False)):
        failing = sorted({f.rank for f in ran.failures})
        if failing:
            first = ran.failures[0]
            ranks = ", ".join(str(r) for r in failing)
            message = (
                f"rank {first.rank}, sample {first.sample}, {first.output}: {first.message} (failing ranks: {ranks})"
            )
        else:
            message = f"every output of all {run.world_size} ranks matched"
        details = {"failing_ranks": failing, "world_size": run.world_size}
        outcomes.append(
            TestOutcome(
                index=index,
                name=ran.name,
                dims=list(case["dims"]),
                passed=not failing,
                message=message,
                details=details,
            )
        )
    return outcomes


def case_timing(
    problem: DistributedProblem, case: DistributedCase, index: int, ran: CaseRun, request: JobRequest, world_size: int
) -> CaseTiming:
    """A case's timing by its slowest rank per sample, with each rank's own median beside it."""
    samples = ran.sample_seconds
    median, mean = ran.seconds, statistics.fmean(samples)
    flops = problem.get_flops(case, world_size)
    nbytes = problem.get_bytes(case, request.dtype, world_size)
    rates = [1.0 / t for t in samples]  # per-sample rates: the CV of GFLOPS is the CV of 1/time, FLOPs or not
    cv = statistics.pstdev(rates) / statistics.fmean(rates) if len(rates) > 1 else 0.0
    return CaseTiming(
        index=index,
        name=ran.name,
        dims=list(case["dims"]),
        method="cpu",
        runtime_median_us=median * 1e6,
        runtime_mean_us=mean * 1e6,
        gflops=flops / median / 1e9,
        gflops_mean=statistics.fmean(flops / t / 1e9 for t in samples),
        gbps=nbytes / median / 1e9,
        flops=flops,
        bytes=nbytes,
        samples=len(samples),
        cv=cv,
        converged=cv <= request.measure.target_cv,
        measured_seconds=sum(samples),
        rank_runtime_median_us=[statistics.median(per_rank) * 1e6 for per_rank in ran.rank_seconds],
    )


def job_result(
    request: JobRequest, problem: DistributedProblem, cases: list[DistributedCase], run: DistributedRun
) -> SubmissionResult:
    """The job's result from the run: an error naming the rank that stopped first, a failure naming the ranks whose
    outputs were wrong, or the timings (a benchmark) or the verdicts alone (a test)."""
    tests = case_outcomes(problem, cases, run)
    timings: list[CaseTiming] = []
    error: ErrorInfo | None = None
    if run.rank_errors:
        first = run.first_errors
        rank = min(first)
        last_line = next((line for line in reversed(first[rank].strip().splitlines()) if line.strip()), "")
        names = ", ".join(str(r) for r in sorted(first))
        error = ErrorInfo(
            code="runtime_error",
            message=f"Rank {rank} stopped ({last_line[:300] or 'no message'}); ranks that stopped first: {names}.",
            log="\n".join(f"rank {r}:\n{text}" for r, text in sorted(run.rank_errors.items())),
        )
        status = "error"
    elif run.failures:
        failing = sorted({f.rank for f in run.failures})
        first = run.failures[0]
        kind = "broke the harness's rules" if run.verdict == "integrity" else "gave a wrong output"
        error = ErrorInfo(
            code=run.verdict or "wrong_answer",
            message=f"Rank {first.rank} {kind} on case {first.case} (sample {first.sample}, {first.output}): "
            f"{first.message}. Failing ranks: {', '.join(str(r) for r in failing)}.",
        )
        status = "failed"
    else:
        status = "passed"
        if request.mode != "test":
            timings = [
                case_timing(problem, case, i, ran, request, run.world_size)
                for i, (case, ran) in enumerate(zip(cases, run.cases, strict=True))
            ]
    gflops, gbps = [t.gflops for t in timings], [t.gbps for t in timings]
    notes = [
        f"Ran on {run.world_size} ranks (gloo processes on the CPU); each sample's time is its slowest rank's, and "
        "each case lists every rank's own median."
    ]
    return SubmissionResult(
        submission_id=request.submission_id,
        problem_slug=request.problem_slug,
        problem_version=problem.version,
        dtype=request.dtype,
        language=request.language,
        mode=request.mode,
        status=status,
        device=ranks_device_name(run.world_size),
        tests=tests,
        timings=timings,
        score_metric=problem.score_metric,
        geomean_gflops=geomean(gflops),
        mean_gflops=arithmetic_mean(gflops),
        geomean_gbps=geomean(gbps),
        mean_gbps=arithmetic_mean(gbps),
        error=error,
        notes=notes,
        world_size=run.world_size,
    )


def run_job(request: JobRequest, solution: Path, timeout_s: float) -> SubmissionResult:
    problem = get_distributed_problem(request.problem_slug)
    # A ranked run always draws a fresh secret seed, as on one device: no caller can replay known inputs.
    seed = request.seed if request.seed is not None and request.mode != "ranked" else secrets.randbits(SEED_BITS)
    samples, warmup = sample_count(request)
    cases = problem.generate_test_cases(request.dtype, "cpu")
    run = run_distributed(
        problem,
        solution,
        request.world_size,
        request.dtype,
        device_kind="cpu",
        samples=samples,
        warmup=warmup,
        seed=seed % (1 << SEED_BITS),
        timeout_s=timeout_s,
    )
    return job_result(request, problem, cases, run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.distributed.job")
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--solution", type=Path, required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--timeout-s", type=float, required=True, help="the ranks' collective timeout")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    request = JobRequest.model_validate_json(args.request.read_text(encoding="utf-8"))
    result = run_job(request, args.solution, args.timeout_s)
    with os.fdopen(args.result_fd, "w", encoding="utf-8") as pipe:
        pipe.write(result.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
