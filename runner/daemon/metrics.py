"""The runner's Prometheus metrics: jobs by outcome, errors by code, queue depth, slots, time per phase.

Written in the text exposition format by hand (a few counters and histograms do not justify a dependency).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

PHASE_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
_PREFIX = "arena_runner"


@dataclass
class Histogram:
    buckets: tuple[float, ...] = PHASE_BUCKETS_S
    counts: list[int] = field(default_factory=lambda: [0] * (len(PHASE_BUCKETS_S) + 1))
    total: float = 0.0
    count: int = 0

    def observe(self, value: float) -> None:
        if not math.isfinite(value) or value < 0:
            return
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1

    def lines(self, name: str, labels: str) -> list[str]:
        out: list[str] = []
        running = 0
        for bound, count in zip([*self.buckets, math.inf], self.counts, strict=True):
            running += count
            le = "+Inf" if math.isinf(bound) else f"{bound:g}"
            out.append(f'{name}_bucket{{{labels},le="{le}"}} {running}')
        out.append(f"{name}_sum{{{labels}}} {self.total:.6f}")
        out.append(f"{name}_count{{{labels}}} {self.count}")
        return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@dataclass
class Metrics:
    """Counters and histograms, updated by the job table and the auth middleware."""

    jobs: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    auth_failures: Counter[str] = field(default_factory=Counter)
    phases: dict[str, Histogram] = field(default_factory=dict)
    mean_job_s: float = 10.0  # moving average of a job's run time, for Retry-After

    def job_finished(self, outcome: str, error_code: str | None, phase_seconds: Mapping[str, float]) -> None:
        self.jobs[outcome] += 1
        if error_code:
            self.errors[error_code] += 1
        for phase, seconds in phase_seconds.items():
            self.phases.setdefault(phase, Histogram()).observe(seconds)
        total = phase_seconds.get("total")
        if total is not None and math.isfinite(total):
            self.mean_job_s = 0.8 * self.mean_job_s + 0.2 * total

    def phase_observed(self, phase: str, seconds: float) -> None:
        """A phase timed after its job's result went out (a GPU slot's teardown)."""
        self.phases.setdefault(phase, Histogram()).observe(seconds)

    def job_rejected(self) -> None:
        self.jobs["rejected"] += 1

    def auth_failed(self, reason: str) -> None:
        self.auth_failures[reason] += 1

    def render(self, gauges: Mapping[str, float]) -> str:
        """The exposition text; `gauges` are current values such as the queue depth."""
        lines: list[str] = [
            f"# HELP {_PREFIX}_jobs_total Finished jobs by outcome (passed, failed, error, cancelled, rejected).",
            f"# TYPE {_PREFIX}_jobs_total counter",
        ]
        lines += [f'{_PREFIX}_jobs_total{{outcome="{_escape(k)}"}} {v}' for k, v in sorted(self.jobs.items())]
        lines += [
            f"# HELP {_PREFIX}_job_errors_total Jobs that ended in an error, by code.",
            f"# TYPE {_PREFIX}_job_errors_total counter",
        ]
        lines += [f'{_PREFIX}_job_errors_total{{code="{_escape(k)}"}} {v}' for k, v in sorted(self.errors.items())]
        lines += [
            f"# HELP {_PREFIX}_auth_failures_total Rejected requests by reason.",
            f"# TYPE {_PREFIX}_auth_failures_total counter",
        ]
        lines += [
            f'{_PREFIX}_auth_failures_total{{reason="{_escape(k)}"}} {v}' for k, v in sorted(self.auth_failures.items())
        ]
        lines += [
            f"# HELP {_PREFIX}_phase_seconds Time spent per job phase (queue, nvcc, startup, compile, test, "
            "benchmark, total).",
            f"# TYPE {_PREFIX}_phase_seconds histogram",
        ]
        for phase, histogram in sorted(self.phases.items()):
            lines += histogram.lines(f"{_PREFIX}_phase_seconds", f'phase="{_escape(phase)}"')
        for name, value in sorted(gauges.items()):
            lines += [f"# TYPE {_PREFIX}_{name} gauge", f"{_PREFIX}_{name} {value:g}"]
        return "\n".join(lines) + "\n"
