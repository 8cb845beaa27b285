"""A problem scored on bandwidth is shown in GB/s: a transpose never reads "0 GFLOPS"."""

from __future__ import annotations

from arena.render import ProgressPrinter, render_result
from contract.wire import CaseTiming, JobEvent, SubmissionResult


def _timing(flops: int, gflops: float) -> CaseTiming:
    return CaseTiming(
        index=0, name="4096x4096", dims=[4096, 4096], method="arena", runtime_median_us=100.0, runtime_mean_us=101.0,
        gflops=gflops, gflops_mean=gflops, gbps=1342.2, flops=flops, bytes=134_217_728, samples=50, cv=0.01,
        converged=True,
    )  # fmt: skip


def _result(metric: str, timing: CaseTiming) -> SubmissionResult:
    return SubmissionResult(
        submission_id="1", problem_slug="matrix-transpose", problem_version=1, dtype="float32", language="cuda",
        mode="benchmark", status="passed", device="H100", timings=[timing], score_metric=metric,  # type: ignore[arg-type]
        geomean_gflops=timing.gflops, mean_gflops=timing.gflops, geomean_gbps=timing.gbps, mean_gbps=timing.gbps,
    )  # fmt: skip


def test_a_bandwidth_scored_result_shows_gb_per_s_and_no_zero_gflops() -> None:
    text = render_result(_result("gbps", _timing(0, 0.0)))
    assert "1,342 GB/s (scored on bandwidth)" in text
    assert "0 GFLOPS" not in text and "0.00 GFLOPS" not in text


def test_a_progress_line_for_a_case_without_arithmetic_shows_gb_per_s() -> None:
    line = ProgressPrinter.describe(JobEvent(seq=1, type="benchmark_case", index=0, count=1, timing=_timing(0, 0.0)))
    assert line is not None and "1,342 GB/s" in line and "GFLOPS" not in line


def test_a_compute_scored_result_still_leads_with_gflops() -> None:
    text = render_result(_result("gflops", _timing(10**9, 10_000.0)))
    assert "geometric mean: 10,000 GFLOPS" in text
