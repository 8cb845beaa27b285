"""Physical floors: impossible times are caught, and every time measured on real hardware passes."""

from __future__ import annotations

import pytest

from runner.hardware import FLOOR_MARGIN, implausible_time, physical_floor_s, spec_for

H100 = spec_for("NVIDIA H100 80GB HBM3")


def test_device_names_with_suffixes_find_their_spec():
    assert spec_for("NVIDIA H200 NVL") is spec_for("NVIDIA H200")
    assert spec_for("CPU (x86_64)") is None


def test_floor_is_bandwidth_bound_for_an_add_and_compute_bound_for_a_large_matmul():
    n = 1 << 26
    add = physical_floor_s(H100, n, 12 * n, "float32")
    assert add == pytest.approx(12 * n / 3350e9)
    m = 4096
    matmul = physical_floor_s(H100, 2 * m**3, 12 * m * m, "float32")
    assert matmul == pytest.approx(2 * m**3 / 494_700e9)


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


@pytest.mark.parametrize(("flops", "nbytes", "dtype", "median_us"), MEASURED_ON_H100)
def test_no_time_measured_on_real_hardware_is_called_impossible(flops, nbytes, dtype, median_us):
    floor = physical_floor_s(H100, flops, nbytes, dtype)
    assert implausible_time(median_us * 1e-6, floor) is None


def test_times_under_the_floor_zero_negative_and_nan_are_rejected():
    floor = physical_floor_s(H100, 1 << 26, 12 << 26, "float32")
    assert "physical floor" in implausible_time(floor * FLOOR_MARGIN * 0.99, floor)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        assert "not a positive finite number" in implausible_time(bad, floor)
    assert implausible_time(1e-9, None) is None
