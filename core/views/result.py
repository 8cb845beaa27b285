"""A SubmissionResult as people read it: the figures of each timed case and of the summary, formatted once.

The CLI's table (`arena/render.py`) and the Discord embed (`bot/ui/embeds.py`) both take their text from here, so
that the same result shows the same digits wherever it is read. Pure functions of `contract.wire` models.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.names import HOST_BOUND_LINE, Method
from contract.wire import CaseTiming, SubmissionResult

CASE_HEADERS = ("case", "median", "mean", "GFLOPS", "GB/s", "samples", "CV")

# One per timing method (tests/test_names.py checks that none is missing).
METHOD_LABELS: dict[Method, str] = {
    "arena": "median of the `arena` method: cold L2, launch latency hidden",
    "seed": "mean of the seed's CUDA-event loop",
    "cpu": "median of a monotonic clock on the CPU",
}


def format_duration_us(us: float) -> str:
    """A runtime given in microseconds, in the unit that keeps it between 1 and 1000, to three decimals."""
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    if us >= 1e3:
        return f"{us / 1e3:.3f} ms"
    return f"{us:.3f} µs"


def format_rate(value: float | None) -> str:
    """A GFLOPS or GB/s figure: whole numbers with separators from 100, else three significant digits (measured
    rates vary by more than that between runs, so more digits would only be noise)."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_cv(cv: float) -> str:
    """The coefficient of variation of a case's per-sample GFLOPS, as a percentage."""
    return f"{cv * 100:.2f}%" if cv >= 0 else "-"


def score_unit(result: SubmissionResult) -> str:
    return "GFLOPS" if result.score_metric == "gflops" else "GB/s"


def case_rate(timing: CaseTiming) -> str:
    """A case's rate in the unit that means something for it: GB/s where it does no arithmetic."""
    return f"{format_rate(timing.gbps)} GB/s" if timing.flops == 0 else f"{format_rate(timing.gflops)} GFLOPS"


@dataclass(frozen=True)
class CaseRow:
    """One timed case, each figure formatted; the order of CASE_HEADERS."""

    name: str
    median: str
    mean: str
    gflops: str
    gbps: str
    samples: str
    cv: str

    def cells(self) -> tuple[str, ...]:
        return (self.name, self.median, self.mean, self.gflops, self.gbps, self.samples, self.cv)


def case_row(timing: CaseTiming) -> CaseRow:
    return CaseRow(
        name=timing.name,
        median=format_duration_us(timing.runtime_median_us),
        mean=format_duration_us(timing.runtime_mean_us),
        # A case that does no arithmetic has no GFLOPS to show; "0" would read as a failure.
        gflops=format_rate(timing.gflops) if timing.flops else "-",
        gbps=format_rate(timing.gbps),
        samples=str(timing.samples),
        cv=format_cv(timing.cv),
    )


def case_rows(result: SubmissionResult) -> list[CaseRow]:
    return [case_row(t) for t in result.timings]


def method_of(result: SubmissionResult) -> str | None:
    """The timing method as the result's own timings record it ("arena, seed" if they differ); None when none."""
    methods = list(dict.fromkeys(t.method for t in result.timings))
    return ", ".join(methods) if methods else None


def method_label(result: SubmissionResult) -> str | None:
    """What the method means, for a reader who does not know the names."""
    method = method_of(result)
    if method is None:
        return None
    return METHOD_LABELS.get(method, method)


def timing_caveat(result: SubmissionResult) -> str | None:
    """The one line that says some cases were timed with the host's part of each call included, naming them; None
    when every case was timed by its events alone."""
    bound = [t.name for t in result.timings if t.host_bound]
    if not bound:
        return None
    cases = "every case" if len(bound) == len(result.timings) else ", ".join(bound)
    return f"{HOST_BOUND_LINE} ({cases})"


@dataclass(frozen=True)
class Summary:
    """The result's headline figures, formatted: the score (geometric mean) and the arithmetic mean, in the
    scoring unit, and the other unit's geometric mean where the score is in GFLOPS."""

    unit: str
    geomean: str
    mean: str
    geomean_gbps: str | None
    """Set for GFLOPS-scored results: their bandwidth, shown beside the score."""
    method: str | None


def summary(result: SubmissionResult) -> Summary:
    if result.score_metric == "gbps":
        return Summary("GB/s", format_rate(result.geomean_gbps), format_rate(result.mean_gbps), None, method_of(result))
    return Summary(
        "GFLOPS",
        format_rate(result.geomean_gflops),
        format_rate(result.mean_gflops),
        format_rate(result.geomean_gbps),
        method_of(result),
    )
