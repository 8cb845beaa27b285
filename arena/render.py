"""Plain-text rendering for the CLI: tables, progress lines and error reports."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from runner.api import CaseTiming, ErrorInfo, JobEvent, SubmissionResult


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> str:
    """A fixed-width table; `align` has one of 'l'/'r' per column (default: first left, others right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(cells, widths, align, strict=False)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def format_duration_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    if us >= 1e3:
        return f"{us / 1e3:.3f} ms"
    return f"{us:.2f} µs"


def format_rate(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


class ProgressPrinter:
    """Prints one line per job event to a stream (stderr by default, so stdout keeps only the results)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, event: JobEvent) -> None:
        line = self.describe(event)
        if line:
            print(line, file=self.stream, flush=True)

    @staticmethod
    def describe(event: JobEvent) -> str | None:
        if event.type == "accepted":
            return f"  running on {event.message}"
        if event.type == "compiling":
            return "  compiling with nvcc …" if event.phase == "nvcc" else "  importing the module …"
        if event.type == "compiled":
            return f"  compiled ({event.message})" if event.message else "  imported"
        if event.type == "test_case" and event.test is not None:
            mark = "ok" if event.test.passed else "FAILED"
            return f"  test {event.index + 1}/{event.count} {event.test.name}: {mark}"  # type: ignore[operator]
        if event.type == "benchmark_case" and event.timing is not None:
            t = event.timing
            return (
                f"  benchmark {event.index + 1}/{event.count} {t.name}: "  # type: ignore[operator]
                f"{format_duration_us(t.runtime_median_us)}, {case_rate(t)} ({t.samples} samples)"
            )
        return None


def case_rate(timing: CaseTiming) -> str:
    """A case's rate in the unit that means something for it: GB/s where it does no arithmetic."""
    return f"{format_rate(timing.gbps)} GB/s" if timing.flops == 0 else f"{format_rate(timing.gflops)} GFLOPS"


def render_error(error: ErrorInfo) -> str:
    text = f"error ({error.code}): {error.message}"
    if error.log:
        text += "\n" + "\n".join(f"    {line}" for line in error.log.splitlines())
    return text


def render_result(result: SubmissionResult) -> str:
    """The results table and summary for a finished job."""
    lines = [f"{result.problem_slug} · {result.dtype} · {result.language} · {result.mode} · {result.device}"]
    if result.timings:
        rows = [
            [
                t.name,
                format_duration_us(t.runtime_median_us),
                format_duration_us(t.runtime_mean_us),
                format_rate(t.gflops) if t.flops else "-",
                format_rate(t.gbps),
                str(t.samples),
                f"{t.cv * 100:.2f}%" if t.cv >= 0 else "-",
            ]
            for t in result.timings
        ]
        headers = ["case", "median", "mean", "GFLOPS", "GB/s", "samples", "CV"]
        lines += ["", table(headers, rows), ""]
        if result.score_metric == "gbps":
            lines.append(
                f"geometric mean: {format_rate(result.geomean_gbps)} GB/s (scored on bandwidth)"
                f"   (arithmetic mean: {format_rate(result.mean_gbps)} GB/s)"
            )
        else:
            lines.append(
                f"geometric mean: {format_rate(result.geomean_gflops)} GFLOPS, {format_rate(result.geomean_gbps)} GB/s"
                f"   (arithmetic mean: {format_rate(result.mean_gflops)} GFLOPS)"
            )
        lines.append(f"timing method: {result.timings[0].method}")
    elif result.tests and result.status == "passed":
        lines.append(f"all {len(result.tests)} test cases passed")
    if result.notes:
        lines.append("notes for reviewers: " + "; ".join(result.notes))
    if result.error is not None:
        lines += ["", render_error(result.error)]
    return "\n".join(lines)
