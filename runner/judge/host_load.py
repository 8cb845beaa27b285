"""How busy the host's CPUs were while a case was checked: the evidence that separates load from hidden work.

The judge's wall-clock check (runner/judge/judged_timer.py) compares its own clock with what the launcher reported.
On a host whose CPUs are oversubscribed, the scheduler's pauses land on the judge's clock but mostly outside the
reported calls, and honest runs look as if they hid work. Where the host was busy, a shortfall is no evidence
of anything: the run is answered `host_busy` (tried again), never `integrity`. A submission that loads the host
itself to blur the check only earns that retry, never a pass.

The measure is Linux's pressure stall information (`/proc/pressure/cpu`, "some"): the share of time at least
one runnable task waited for a CPU. It is system-wide even inside the sandbox's namespaces. Where the kernel
does not provide it, the one-minute load average against the number of CPUs stands in.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

PRESSURE_FILE = "/proc/pressure/cpu"
LOADAVG_FILE = "/proc/loadavg"
# A host is busy when tasks waited for a CPU more than this share of the time.
BUSY_STALL_FRACTION = 0.10


def _stall_total_s() -> float | None:
    try:
        with open(PRESSURE_FILE, encoding="ascii") as fh:
            for line in fh:
                if line.startswith("some "):
                    fields = dict(part.split("=", 1) for part in line.split()[1:])
                    return int(fields["total"]) / 1e6
    except (OSError, ValueError, KeyError):
        return None
    return None


def _load_fraction() -> float | None:
    """The one-minute load average beyond the CPU count, as a share of the CPU count (0 when not beyond)."""
    try:
        with open(LOADAVG_FILE, encoding="ascii") as fh:
            load = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    cpus = os.cpu_count() or 1
    return max(load - cpus, 0.0) / cpus


@dataclass
class CpuPressure:
    """Stall time accumulated between `start()` and `busy_fraction()`."""

    started_at: float = 0.0
    stall_at_start: float | None = None

    def start(self) -> None:
        self.started_at = time.monotonic()
        self.stall_at_start = _stall_total_s()

    def busy_fraction(self) -> float | None:
        """The share of the time since `start()` in which some task waited for a CPU; None when unknown."""
        elapsed = time.monotonic() - self.started_at
        stall = _stall_total_s()
        if self.stall_at_start is not None and stall is not None and elapsed > 0:
            return min(max(stall - self.stall_at_start, 0.0) / elapsed, 1.0)
        return _load_fraction()

    def busy(self) -> bool:
        fraction = self.busy_fraction()
        return fraction is not None and fraction > BUSY_STALL_FRACTION
