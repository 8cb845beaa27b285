"""The launcher's arena sample on a real GPU: plausible, stable figures and the launch-overhead correction.

These drive `Harness.time_gpu`, the production sample, in this process; the judge's checks around it are
exercised end to end by tests/gpu/test_examples_gpu.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.gpu

# The judge's bound on the SM clock before it measures the spin's rate.
SPIN_CYCLES_PER_S = 2.0e9


class HarnessTimer:
    """A SampleTimer over the launcher's arena sample: the spin sized from the host's spans as the judge sizes
    it, and an uncovered sample dropped (the spin doubled), as is one taken while the GPU throttled."""

    def __init__(self) -> None:
        from runner.launcher.harness import Harness
        from runner.timing.gpu import MIN_SPIN_S, GpuSensors

        self.harness = Harness("cuda")
        self.spin_s = MIN_SPIN_S
        self.sensors = GpuSensors.open(0)

    def reading(self, call: Callable[[], object], *, run: bool = True) -> dict:
        from runner.launcher.harness import CallSet

        cycles = int(self.spin_s * SPIN_CYCLES_PER_S)
        return self.harness.time_gpu(CallSet(call, []), run, cycles, 0, "arena")

    def calibrate(self, call: Callable[[], object]) -> None:
        from runner.timing.gpu import covering_spin_s

        self.spin_s = covering_spin_s(statistics.median(self.reading(call)["host_span_s"] for _ in range(3)))

    def __call__(self, call: Callable[[], object]) -> float | None:
        from runner.timing.gpu import MAX_SPIN_S

        reading = self.reading(call)
        if reading["covered_s"] < reading["host_span_s"]:
            self.spin_s = min(2 * self.spin_s, MAX_SPIN_S)
            return None
        return None if self.sensors.throttled() else reading["elapsed_s"]


def test_the_arena_sample_reads_a_large_copy_near_memory_bandwidth():
    import torch

    from contract.wire import MeasureConfig
    from runner.timing.measurement import Measurement

    n = 1 << 26
    sets = [(torch.randn(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(2)]
    calls = [lambda a=a, b=b: b.copy_(a) for a, b in sets]
    timing = Measurement(calls, HarnessTimer(), MeasureConfig(), flops=0, bytes=8 * n).run(0, "copy", [n])
    assert timing.converged
    # A 512 MiB device copy cannot beat the HBM peak, and an H100 or H200 does it at well over 1 TB/s.
    assert 1000 < timing.gbps < 5000
    assert timing.sm_clock_mhz is None or timing.sm_clock_mhz > 500


def test_overhead_correction_is_small_and_positive_on_a_known_gpu():
    import torch

    from runner.timing.calibration import EMPTY_KERNEL_NCU_US, MAX_EVENT_OVERHEAD_S, event_overhead_s

    name = torch.cuda.get_device_name()
    if name not in EMPTY_KERNEL_NCU_US:
        pytest.skip("no ncu reference for this GPU model")
    timer = HarnessTimer()
    timer.calibrate(lambda: None)
    # The empty kernel as the judge times it for the correction: the calibration sample at 0 cycles.
    empty = [timer.reading(lambda: None, run=False) for _ in range(64)]
    raw = [r["elapsed_s"] for r in empty if r["covered_s"] >= r["host_span_s"]]
    overhead = event_overhead_s(statistics.median(raw), name)
    assert 0.0 <= overhead < MAX_EVENT_OVERHEAD_S
    corrected = [max(t - overhead, t / 2) for t in raw]
    assert abs(statistics.median(corrected) * 1e6 - EMPTY_KERNEL_NCU_US[name]) < 0.5
