"""Plain-text rendering for the CLI: tables, progress lines and error reports."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from contract.wire import ErrorInfo, JobEvent, ProfileReport, SubmissionResult
from core.views import profile as profile_view
from core.views.output import output_text
from core.views.result import CASE_HEADERS, case_rate, case_rows, summary, timing_caveat
from core.views.result import format_duration_us as format_duration_us  # the commands format figures the same way
from core.views.result import format_rate as format_rate

if TYPE_CHECKING:
    from core.contests.entry import ContestEntries


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


def render_error(error: ErrorInfo) -> str:
    text = f"error ({error.code}): {error.message}"
    if error.log:
        text += "\n" + "\n".join(f"    {line}" for line in error.log.splitlines())
    return text


def render_profile(report: ProfileReport) -> list[str]:
    """A profile's two kernel tables, its summary and the files that came with it (figures formatted by
    `core.views.profile`, as the Discord embed's are)."""
    if not report.kernels:
        return [profile_view.NO_KERNELS, f"files: {profile_view.artifact_list(report)}"]
    rows = profile_view.kernel_rows(report)
    lines = [
        table(profile_view.LAUNCH_HEADERS, [row.launch_cells() for row in rows], align="lrrrrrrll"),
        "",
        table(profile_view.TRAFFIC_HEADERS, [row.traffic_cells() for row in rows], align="lrrl"),
        "",
    ]
    labelled = profile_view.summary(report).lines()
    width = max(len(label) for label, _ in labelled) + 1
    lines += [f"{label + ':':<{width}} {text}" for label, text in labelled]
    if report.notes:
        lines.append("profiler notes: " + "; ".join(report.notes))
    lines.append(f"files: {profile_view.artifact_list(report)}")
    return lines


def result_data_types(slug: str, dtype: str) -> str:
    """The data types a result was computed on: `uint32` for a finite-field problem stored under the float32 key.
    A problem that is not built in (a stored module) shows its key."""
    from problems.catalog import data_types
    from problems.registry import builtin_problems, canonical_slug

    problem = builtin_problems().get(canonical_slug(slug))
    return data_types(problem, dtype) if problem is not None and dtype in problem.dtypes else dtype  # type: ignore[arg-type]


def render_result(result: SubmissionResult) -> str:
    """The results table and summary for a finished job (its figures formatted by `core.views.result`), or the
    profile of a job of mode `profile`."""
    dtype = result_data_types(result.problem_slug, result.dtype)
    lines = [f"{result.problem_slug} · {dtype} · {result.language} · {result.mode} · {result.device}"]
    if result.profile is not None:
        passed = f"all {len(result.tests)} test cases passed; " if result.tests and result.status == "passed" else ""
        lines += [f"{passed}one case profiled (a profile is never ranked)", ""]
        lines += render_profile(result.profile)
    elif result.timings:
        lines += ["", table(CASE_HEADERS, [row.cells() for row in case_rows(result)]), ""]
        view = summary(result)
        if view.geomean_gbps is None:
            lines.append(
                f"geometric mean: {view.geomean} {view.unit} (scored on bandwidth)"
                f"   (arithmetic mean: {view.mean} {view.unit})"
            )
        else:
            lines.append(
                f"geometric mean: {view.geomean} {view.unit}, {view.geomean_gbps} GB/s"
                f"   (arithmetic mean: {view.mean} {view.unit})"
            )
        lines.append(f"timing method: {view.method}")
        if (caveat := timing_caveat(result)) is not None:
            lines.append(caveat)
    elif result.tests and result.status == "passed":
        lines.append(f"all {len(result.tests)} test cases passed")
    if result.notes:
        lines.append("notes for reviewers: " + "; ".join(result.notes))
    if result.error is not None:
        lines += ["", render_error(result.error)]
    if result.output:
        lines += ["", "what the solution printed:", output_text(result.output)]
    return "\n".join(lines)


def render_contests(found: ContestEntries) -> str:
    """The line under a ranked run's result: the contests it counts for, or why it counts for none."""
    return found.line


def result_json(result: SubmissionResult, contests: ContestEntries | None) -> str:
    """`--json`'s document: the result as the runner's wire model writes it, with `contests` beside its fields
    when there is something to say of them (a ranked run on a problem that a contest holds)."""
    if contests is None:
        return result.model_dump_json(indent=2)
    document = result.model_dump(mode="json")
    document["contests"] = contests.model_dump(mode="json")
    return json.dumps(document, indent=2)
