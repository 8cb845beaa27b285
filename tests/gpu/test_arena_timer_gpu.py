"""The arena timer on a real GPU: plausible, stable figures and the launch-overhead correction."""

from __future__ import annotations

import statistics

import pytest

pytestmark = pytest.mark.gpu


def test_arena_timer_reads_a_large_copy_near_memory_bandwidth():
    import torch

    from runner.api import MeasureConfig
    from runner.timing.gpu import ArenaEventTimer
    from runner.timing.measurement import Measurement

    n = 1 << 26
    sets = [(torch.randn(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(2)]
    calls = [lambda a=a, b=b: b.copy_(a) for a, b in sets]
    timing = Measurement(calls, ArenaEventTimer(), MeasureConfig(), flops=0, bytes=8 * n).run(0, "copy", [n])
    assert timing.converged
    # A 512 MiB device copy cannot beat the HBM peak, and an H100 or H200 does it at well over 1 TB/s.
    assert 1000 < timing.gbps < 5000
    assert timing.sm_clock_mhz is None or timing.sm_clock_mhz > 500


def test_overhead_correction_is_small_and_positive_on_a_known_gpu():
    import torch

    from runner.timing.calibration import EMPTY_KERNEL_NCU_US
    from runner.timing.gpu import ArenaEventTimer

    if torch.cuda.get_device_name() not in EMPTY_KERNEL_NCU_US:
        pytest.skip("no ncu reference for this GPU model")
    timer = ArenaEventTimer()
    timer.calibrate(lambda: torch.cuda._sleep(0))
    assert 0.0 <= timer.overhead_s < 3e-6
    empty = [timer(lambda: torch.cuda._sleep(0)) for _ in range(50)]
    kept = [t for t in empty if t is not None]
    assert abs(statistics.median(kept) * 1e6 - EMPTY_KERNEL_NCU_US[torch.cuda.get_device_name()]) < 0.5
