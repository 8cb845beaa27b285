"""What the GPU side of a sample shares between the judge and the launcher: the L2 flush's size, the covering
spin's bounds, the persisting-L2 reset, and NVML's clock and throttle readings.

The sample itself is taken by the launcher (runner/launcher/harness.py) and checked by the judge
(runner/judge/judged_timer.py); which steps it has is the timing method's (runner/timing/methods/).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
from dataclasses import dataclass
from typing import Any

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
