"""The arena GPU timer: a cold L2, hidden launch latency, and events on the submission's own stream.

Each sample enqueues, on the current stream (the legacy default stream, where CUDA submissions launch):

    read 4x L2 (flush) -> event A -> spin kernel -> event START -> solution(...) -> event STOP -> device sync

The flush reads rather than writes, so no dirty lines are left for the timed kernel to write back. The spin
kernel keeps the GPU busy while the host enqueues START, the solution's launches and STOP, so host launch
latency never lands between the events. A sample is kept only if the spin provably covered the host: the
GPU time from A to START must exceed the host time from before the flush to after STOP; otherwise the
sample is dropped and the spin doubled.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner.timing.calibration import EMPTY_KERNEL_NCU_US, event_overhead_s

log = logging.getLogger(__name__)

FLUSH_L2_MULTIPLE = 4
MIN_FLUSH_BYTES = 64 * 1024 * 1024
SPIN_MARGIN_S = 10e-6
MIN_SPIN_S = 20e-6
MAX_SPIN_S = 5e-3


def covering_spin_s(host_span_s: float) -> float:
    """A spin that covers a host enqueue time of `host_span_s` with room to spare, within the spin's bounds."""
    return min(max(1.5 * host_span_s + SPIN_MARGIN_S, MIN_SPIN_S), MAX_SPIN_S)


CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
# NVML clock-event reasons that mean the GPU slowed itself for heat or power emergencies.
_THROTTLE_MASK = 0x8 | 0x20 | 0x40 | 0x80  # HW slowdown, SW thermal, HW thermal, HW power brake


def reset_persisting_l2() -> bool:
    """Return persisting-L2 lines to normal and set the persisting carve-out to zero (driver API)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    ok = cuda.cuCtxResetPersistingL2Cache() == 0
    ok &= cuda.cuCtxSetLimit(ctypes.c_int(CU_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(0)) == 0
    return bool(ok)


@dataclass
class GpuSensors:
    """SM clock, temperature and throttle state through NVML, when it is available."""

    handle: Any = None
    nvml: Any = None

    @classmethod
    def open(cls, device_index: int) -> GpuSensors:
        try:
            import pynvml

            pynvml.nvmlInit()
            return cls(pynvml.nvmlDeviceGetHandleByIndex(device_index), pynvml)
        except Exception:  # NVML missing or unsupported: timing still works, without clock records.
            log.warning("NVML unavailable: clocks and throttling will not be recorded")
            return cls()

    def sm_clock_mhz(self) -> float | None:
        if self.handle is None:
            return None
        return float(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))

    def temperature_c(self) -> float | None:
        if self.handle is None:
            return None
        return float(self.nvml.nvmlDeviceGetTemperature(self.handle, self.nvml.NVML_TEMPERATURE_GPU))

    def throttled(self) -> bool:
        if self.handle is None:
            return False
        with contextlib.suppress(Exception):
            return bool(self.nvml.nvmlDeviceGetCurrentClocksEventReasons(self.handle) & _THROTTLE_MASK)
        return False


@dataclass
class ArenaEventTimer:
    """Times one call per sample as described in the module docstring. Returns None for a dropped sample."""

    device_index: int = 0
    spin_s: float = MIN_SPIN_S
    dropped: int = 0
    # The fixed cost the event pair adds around any launch, beyond what ncu counts (see `calibrate`).
    overhead_s: float = 0.0
    sensors: GpuSensors = field(init=False)

    def __post_init__(self) -> None:
        import torch

        self._torch = torch
        props = torch.cuda.get_device_properties(self.device_index)
        flush_bytes = max(FLUSH_L2_MULTIPLE * int(props.L2_cache_size), MIN_FLUSH_BYTES)
        self._flush = torch.ones(flush_bytes // 4, dtype=torch.float32, device="cuda")
        self._flush_out = torch.empty((), dtype=torch.float32, device="cuda")
        self._a, self._start, self._stop = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        # An upper bound on the SM clock: at any lower clock the spin only lasts longer.
        self._cycles_per_s = 2.0e9
        self.sensors = GpuSensors.open(self.device_index)

    def flush_l2(self) -> None:
        self._torch.sum(self._flush, dim=0, out=self._flush_out)

    def calibrate(self, call: Callable[[], object]) -> None:
        """Size the spin from the host time needed to enqueue START, the call and STOP."""
        cuda = self._torch.cuda
        worst = 0.0
        for _ in range(3):
            cuda.synchronize()
            t0 = time.perf_counter()
            self._start.record()
            call()
            self._stop.record()
            worst = max(worst, time.perf_counter() - t0)
            cuda.synchronize()
        self.spin_s = covering_spin_s(worst)
        self.overhead_s = self.event_overhead_s()

    def empty_kernel_s(self, samples: int = 64) -> float:
        """Median time of an empty kernel (a zero-cycle spin) under this very protocol."""
        torch = self._torch
        kept = [t for t in (self._sample(lambda: torch.cuda._sleep(0)) for _ in range(samples)) if t is not None]
        return statistics.median(kept) if kept else 0.0

    def event_overhead_s(self) -> float:
        """The event pair's fixed cost: the empty kernel's time here minus its ncu duration on this GPU model.

        Events are written by the GPU front end, so START→STOP includes about a microsecond of launch work
        that Nsight Compute's gpu__time_duration does not. The empty kernel's ncu duration is a property of
        the GPU model, recorded by bench/timing_fidelity.py; on a model without a record nothing is subtracted.
        """
        name = self._torch.cuda.get_device_name(self.device_index)
        return event_overhead_s(self.empty_kernel_s(), name) if name in EMPTY_KERNEL_NCU_US else 0.0

    def __call__(self, call: Callable[[], object]) -> float | None:
        elapsed = self._sample(call)
        if elapsed is None:
            return None
        # Never below half the raw reading: the correction is small next to any real kernel.
        return max(elapsed - self.overhead_s, elapsed / 2)

    def _sample(self, call: Callable[[], object]) -> float | None:
        torch = self._torch
        host_start = time.perf_counter()
        self.flush_l2()
        self._a.record()
        torch.cuda._sleep(int(self.spin_s * self._cycles_per_s))
        self._start.record()
        call()
        self._stop.record()
        host_span = time.perf_counter() - host_start
        torch.cuda.synchronize()
        covered_s = self._a.elapsed_time(self._start) / 1e3
        if covered_s < host_span or self.sensors.throttled():
            self.dropped += 1
            if covered_s < host_span:
                self.spin_s = min(2 * max(self.spin_s, host_span), MAX_SPIN_S)
            return None
        return self._start.elapsed_time(self._stop) / 1e3
