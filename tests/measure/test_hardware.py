"""Physical floors: impossible times are caught, and every time measured on real hardware passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.wire import MeasuredPeaks
from runner.gpus import (
    DATASHEET_HEADROOM,
    MEASURED_BANDWIDTH_HEADROOM,
    MEASURED_COMPUTE_HEADROOM,
    implausible_time,
    physical_floor,
    spec_for,
)

H100_NAME = "NVIDIA H100 80GB HBM3"
H100 = spec_for(H100_NAME)
H200 = spec_for("NVIDIA H200")
PEAKS_H200 = Path(__file__).resolve().parents[2] / "bench" / "results" / "peaks_h200.json"
# What runner.judge.peak_probe reported on the H200 that bench/results/timing_fidelity_h200.md comes from.
H200_MEASURED = MeasuredPeaks.model_validate_json(PEAKS_H200.read_text())


def test_device_names_with_suffixes_find_their_spec():
    assert spec_for("NVIDIA H200 NVL") is spec_for("NVIDIA H200")
    assert spec_for("CPU (x86_64)") is None


def test_floor_is_bandwidth_bound_for_an_add_and_compute_bound_for_a_large_matmul():
    n = 1 << 26
    add = physical_floor(n, 12 * n, "float32", H100, None)
    assert add is not None and add.seconds == pytest.approx(12 * n / (3350e9 * DATASHEET_HEADROOM))
    assert "datasheet" in add.basis and "GB/s" in add.basis
    m = 4096
    matmul = physical_floor(2 * m**3, 12 * m * m, "float32", H100, None)
    assert matmul is not None and matmul.seconds == pytest.approx(2 * m**3 / (494_700e9 * DATASHEET_HEADROOM))
    assert "GFLOPS" in matmul.basis


def test_measured_peaks_tighten_the_floor_where_they_are_below_the_datasheet():
    n = 1 << 26
    floor = physical_floor(n, 12 * n, "float32", H200, H200_MEASURED)
    assert floor is not None
    assert floor.seconds == pytest.approx(12 * n / (H200_MEASURED.bandwidth_gbps * MEASURED_BANDWIDTH_HEADROOM * 1e9))
    assert "measured" in floor.basis
    datasheet_only = physical_floor(n, 12 * n, "float32", H200, None)
    assert datasheet_only is not None and floor.seconds > datasheet_only.seconds


def test_a_gpu_missing_from_the_table_gets_a_floor_from_its_measured_peaks():
    unknown = H200_MEASURED.model_copy(update={"device": "NVIDIA RTX 6000 Ada Generation"})
    assert spec_for(unknown.device) is None
    m = 4096
    floor = physical_floor(2 * m**3, 12 * m * m, "float16", None, unknown)
    assert floor is not None
    rate = unknown.ceiling_gflops["float16"] * MEASURED_COMPUTE_HEADROOM
    assert floor.seconds == pytest.approx(2 * m**3 / (rate * 1e9))
    assert physical_floor(2 * m**3, 12 * m * m, "float16", None, None) is None


def test_a_datasheet_tighter_than_a_slow_measurement_still_bounds_the_floor():
    # A probe run on a throttled GPU must not loosen the floor below what the datasheet alone gives.
    slow = H200_MEASURED.model_copy(update={"bandwidth_gbps": 10_000.0})
    n = 1 << 26
    floor = physical_floor(n, 12 * n, "float32", H200, slow)
    assert floor is not None and "datasheet" in floor.basis


# (flops, bytes, dtype, median µs) measured on an H100 by bench/timing_fidelity.py and the examples
# (bench/results/timing_fidelity_h100.md, bench/results/examples_seed_h100.txt).
MEASURED_ON_H100 = [
    (1 << 26, 12 << 26, "float32", 260.0),
    (1 << 24, 12 << 24, "float32", 62.27),
    (1 << 16, 12 << 16, "float32", 2.91),
    (2 * 1024**3, 12 * 1024**2, "float32", 61.09),
    (2 * 4096**3, 12 * 4096**2, "float32", 2668.0),
    (2 * 4096**3, 12 * 4096**2, "float32", 3231.0),  # the Triton example, the fastest fp32 kernel seen
]


# (flops, bytes, dtype, median µs) measured on an H200 by bench/timing_fidelity.py, in process and through
# the runner (bench/results/timing_fidelity_h200.md). The 2^24 add streamed 4.5 TB/s, above the probe's
# 4.3 TB/s: the headroom is needed.
MEASURED_ON_H200 = [
    (1 << 26, 12 << 26, "float32", 182.09),
    (1 << 24, 12 << 24, "float32", 44.44),
    (1 << 20, 12 << 20, "float32", 5.05),
    (1 << 16, 12 << 16, "float32", 2.27),
    (2 * 1024**3, 12 * 1024**2, "float32", 60.97),
    (2 * 4096**3, 12 * 4096**2, "float32", 2679.34),
    (2 * 512**3, 12 * 512**2, "float32", 94.76),
]


@pytest.mark.parametrize(("flops", "nbytes", "dtype", "median_us"), MEASURED_ON_H100)
def test_no_time_measured_on_an_h100_is_called_impossible(flops, nbytes, dtype, median_us):
    floor = physical_floor(flops, nbytes, dtype, H100, None)
    assert implausible_time(median_us * 1e-6, floor) is None


@pytest.mark.parametrize(("flops", "nbytes", "dtype", "median_us"), MEASURED_ON_H200)
def test_no_time_measured_on_an_h200_is_called_impossible_with_its_measured_peaks(flops, nbytes, dtype, median_us):
    floor = physical_floor(flops, nbytes, dtype, H200, H200_MEASURED)
    assert implausible_time(median_us * 1e-6, floor) is None


def test_times_under_the_floor_zero_negative_and_nan_are_rejected():
    floor = physical_floor(1 << 26, 12 << 26, "float32", H200, H200_MEASURED)
    assert floor is not None
    reason = implausible_time(floor.seconds * 0.99, floor)
    assert reason is not None and "physical floor" in reason and "measured" in reason
    assert implausible_time(floor.seconds * 1.01, floor) is None
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        assert "not a positive finite number" in (implausible_time(bad, floor) or "")
    assert implausible_time(1e-9, None) is None
