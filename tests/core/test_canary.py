"""Canary verdicts: a slow runner drifts, one within the measured spread does not, a drift quarantines only once a
second measurement confirms it, and reports of another set version or GPU type are never compared."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from contract.wire import CanaryReport, CanaryTiming
from core.canary import (
    REFERENCE_MEDIANS_US,
    CanaryThresholds,
    CanaryThresholdsError,
    canary_drift,
    comparable_reports,
)

# The pooled medians of the H200 runs (bench/results/canaries_gpu_h200.txt), as a pool of another GPU type.
GPU_MEDIANS = {"add_fp32_2^24": 47.87, "matmul_fp16_4096": 192.78, "matmul_fp32_2048": 348.26, "copy_2^26_bytes": 34.06}
CPU_MEDIANS = {"matmul_fp32_512": 1750.0, "memcpy_16MiB": 2500.0, "python_loop_20k": 2300.0}
# The largest single-run deviations measured on idle H200s, per kernel.
MEASURED_SPREAD = {
    "add_fp32_2^24": 1.024,
    "matmul_fp16_4096": 1.143,
    "matmul_fp32_2048": 1.054,
    "copy_2^26_bytes": 0.992,
}


def report(
    scale: float | Mapping[str, float] = 1.0,
    *,
    gpu_type: str = "h100",
    set_version: int = 1,
    device: str = "gpu",
) -> CanaryReport:
    """A report whose kernels take `scale` times the base medians (one factor, or one per kernel)."""
    base = GPU_MEDIANS if device == "gpu" else CPU_MEDIANS
    factors = scale if isinstance(scale, Mapping) else dict.fromkeys(base, scale)
    return CanaryReport(
        device=device,  # type: ignore[arg-type]
        gpu_type=gpu_type if device == "gpu" else "cpu",
        set_version=set_version,
        timings=[
            CanaryTiming(name=name, median_us=us * factors.get(name, 1.0), rse=0.005, samples=30)
            for name, us in base.items()
        ],
        sm_clock_mhz=1500.0 if device == "gpu" else None,
        measured_at=datetime.now(UTC),
    )


def healthy_pool(device: str = "gpu") -> list[CanaryReport]:
    """Four runners within a few per cent of each other, as the measured pools were."""
    return [report(f, device=device) for f in (0.98, 1.0, 1.0, 1.02)]


def test_a_runner_30_percent_slow_on_the_gpu_is_drifted_and_needs_confirmation() -> None:
    verdict = canary_drift(report(1.3), healthy_pool(), CanaryThresholds())
    assert verdict.status == "drifted"
    assert verdict.baseline == "pool" and verdict.peers == 4
    assert {k.name for k in verdict.drifted_kernels} == set(GPU_MEDIANS)
    assert verdict.needs_confirmation and not verdict.quarantines
    assert verdict.stored == "needs_confirmation"
    assert "matmul_fp32_2048 30 % slower" in verdict.message
    assert "h100 pool's median (5 runners, set v1)" in verdict.message
    assert "measure again" in verdict.message


def test_a_second_drifted_measurement_confirms_the_quarantine() -> None:
    first = canary_drift(report(1.3), healthy_pool(), CanaryThresholds())
    second = canary_drift(report(1.28), healthy_pool(), CanaryThresholds(), previous=first)
    assert second.status == "drifted" and not second.needs_confirmation
    assert second.quarantines and second.stored == "drifted"
    assert "second measurement drifted too" in second.message


def test_a_single_slow_measurement_followed_by_a_healthy_one_is_ok() -> None:
    # Ten runs back to back in one process read the FP32 product 41 % slow on an H200; the next, rested run did not.
    first = canary_drift(report({"matmul_fp32_2048": 1.41}), healthy_pool(), CanaryThresholds())
    assert first.status == "drifted" and first.needs_confirmation
    assert [k.name for k in first.drifted_kernels] == ["matmul_fp32_2048"]
    second = canary_drift(report(1.01), healthy_pool(), CanaryThresholds(), previous=first)
    assert second.status == "ok" and not second.quarantines and second.stored == "ok"


def test_a_runner_within_the_measured_spread_is_ok() -> None:
    verdict = canary_drift(report(MEASURED_SPREAD), healthy_pool(), CanaryThresholds())
    assert verdict.status == "ok", verdict.message
    assert not verdict.drifted_kernels and not verdict.needs_confirmation
    assert "Within limits" in verdict.message and "matmul_fp16_4096" in verdict.message


def test_a_runner_faster_than_its_pool_drifts_too() -> None:
    verdict = canary_drift(report({"add_fp32_2^24": 0.8}), healthy_pool(), CanaryThresholds())
    assert verdict.status == "drifted"
    assert "add_fp32_2^24 25 % faster" in verdict.message


def test_the_memory_bound_limit_is_tighter_than_the_fp16_products() -> None:
    # 15 % on the FP16 product is inside its 20 % limit; 15 % on the copy is outside the default 10 %.
    assert canary_drift(report({"matmul_fp16_4096": 1.15}), healthy_pool()).status == "ok"
    assert canary_drift(report({"copy_2^26_bytes": 1.15}), healthy_pool()).status == "drifted"


def test_one_drifted_peer_does_not_drift_a_healthy_runner() -> None:
    # The baseline includes the runner judged: with two peers, one of them 30 % slow, the median is a healthy one.
    peers = [report(1.0), report(1.3)]
    assert canary_drift(report(1.01), peers, CanaryThresholds()).status == "ok"
    assert canary_drift(report(1.3), [report(1.0), report(1.01)], CanaryThresholds()).status == "drifted"


def test_reports_of_another_set_version_are_not_compared() -> None:
    slow_old_set = [report(1.5, set_version=1) for _ in range(3)]
    assert comparable_reports(report(set_version=2), slow_old_set) == []
    verdict = canary_drift(report(set_version=2), slow_old_set, CanaryThresholds())
    assert verdict.status == "no_baseline" and verdict.peers == 0
    mixed = slow_old_set + healthy_pool_of_version(2)
    verdict = canary_drift(report(set_version=2), mixed, CanaryThresholds())
    assert verdict.status == "ok" and verdict.peers == 4


def healthy_pool_of_version(set_version: int) -> list[CanaryReport]:
    return [report(f, set_version=set_version) for f in (0.98, 1.0, 1.0, 1.02)]


def test_reports_of_another_gpu_type_or_device_are_not_compared() -> None:
    others = [report(1.5, gpu_type="a100") for _ in range(3)] + healthy_pool("cpu")
    verdict = canary_drift(report(1.0, gpu_type="b200"), others, CanaryThresholds())
    assert verdict.status == "no_baseline" and verdict.peers == 0


def test_no_peers_and_no_reference_table_gives_no_baseline() -> None:
    assert ("a100", 1) not in REFERENCE_MEDIANS_US
    verdict = canary_drift(report(1.3, gpu_type="a100"), [], CanaryThresholds())
    assert verdict.status == "no_baseline" and verdict.baseline == "none"
    assert not verdict.needs_confirmation and not verdict.quarantines
    assert verdict.stored == "no_baseline"
    assert "0 other runners of the a100 pool" in verdict.message
    assert "no reference table for a100 set v1" in verdict.message
    # One peer is not enough either: with two runners, which of them drifted cannot be told.
    lone = canary_drift(report(1.3, gpu_type="a100"), [report(1.0, gpu_type="a100")], CanaryThresholds())
    assert lone.status == "no_baseline"


def test_too_few_peers_fall_back_on_the_reference_table_with_a_looser_limit() -> None:
    reference = REFERENCE_MEDIANS_US[("h200", 1)]
    near = canary_drift(report(1.15, gpu_type="h200"), [report(1.0, gpu_type="h200")], CanaryThresholds())
    assert near.status == "ok" and near.baseline == "reference" and near.peers == 1
    assert "h200 reference table" in near.message and "1 other runner of the h200 pool" in near.message
    far = canary_drift(report(1.4, gpu_type="h200"), [], CanaryThresholds())
    assert far.status == "drifted" and far.baseline == "reference"
    assert {k.baseline_us for k in far.kernels} == set(reference.values())


def test_a_busy_cpu_machine_is_not_drifted_but_a_gross_slowdown_is() -> None:
    # The largest CPU-time deviations measured on a busy 2-core machine (bench/results/canaries_cpu.txt): the copy
    # ran twice as fast in a quiet moment as the busy runs' median.
    busy = {"matmul_fp32_512": 1.40, "memcpy_16MiB": 0.50, "python_loop_20k": 1.44}
    assert canary_drift(report(busy, device="cpu"), healthy_pool("cpu"), CanaryThresholds()).status == "ok"
    slow = canary_drift(report(2.5, device="cpu"), healthy_pool("cpu"), CanaryThresholds())
    assert slow.status == "drifted"
    assert {k.name for k in slow.drifted_kernels} == {"matmul_fp32_512", "python_loop_20k"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"gpu": 0.0},
        {"cpu": -1.0},
        {"kernel_limits": {"copy_2^26_bytes": 0.0}},
        {"min_peers": 0},
        {"reference_extra": -0.1},
    ],
)
def test_thresholds_that_cannot_judge_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(CanaryThresholdsError):
        CanaryThresholds(**kwargs)  # type: ignore[arg-type]
