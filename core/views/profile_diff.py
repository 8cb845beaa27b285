"""Two profiles side by side: each kernel's figures in A and in B and how they moved, and the totals.

`diff_reports` builds the typed diff (`contract.wire.ProfileDiff`, which the API answers) from two
`ProfileReport`s; the text helpers below turn it into the lines the CLI (`arena profile diff`) and the Discord embed
(`bot/ui/profile_diff.py`) print, so that a diff reads the same wherever it is read. The figures are formatted as
`core.views.profile` formats one profile's, so that each can be found again in either run's `profile.txt`.

Kernels are matched by name: a kernel of the same name is the same code path in both runs (the runner lists each
kernel once, summed over its launches). A kernel that only one run launched is listed on its side alone, with no
change: a renamed kernel has no counterpart to be compared with, and the totals still compare the whole call.
Pure functions of `contract.wire` models.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from contract.wire import (
    BChoice,
    FigureChange,
    KernelDiff,
    KernelProfile,
    ProfileDiff,
    ProfiledRun,
    ProfileReport,
    ProfileTotals,
    StallChange,
)
from core.views.profile import format_amount, format_duration, format_percent, format_ratio, format_shared

HEADERS = ("figure", "A", "B", "change")
# Stall reasons shown per kernel: each side's top three, as one profile's table shows them.
STALLS_SHOWN = 3
# What "B" is when the caller did not name it, said after the headline.
CHOICE_TEXT: dict[BChoice, str] = {
    "given": "as given",
    "own_fastest": "your fastest other profile of this problem, GPU type, dtype and case",
    "leader": "the profile of a leader's code, which its contest revealed",
}

Unit = Literal["duration", "percent", "count", "shared", "bytes", "flops"]


# -- the diff ----------------------------------------------------------------------------------------------------


def figure(a: float | None, b: float | None) -> FigureChange:
    """A's and B's figure and the change; no change unless both are known, no percentage where A's is 0."""
    if a is None or b is None:
        return FigureChange(a=a, b=b)
    change = b - a
    return FigureChange(a=a, b=b, change=change, change_pct=None if a == 0 else change / a * 100)


def _stalls(a: KernelProfile | None, b: KernelProfile | None) -> list[StallChange]:
    shares_a = {s.name: s.share for s in (a.stalls[:STALLS_SHOWN] if a else [])}
    shares_b = {s.name: s.share for s in (b.stalls[:STALLS_SHOWN] if b else [])}
    names = sorted(set(shares_a) | set(shares_b), key=lambda n: -max(shares_a.get(n, 0.0), shares_b.get(n, 0.0)))
    return [StallChange(name=n, a_share=shares_a.get(n), b_share=shares_b.get(n)) for n in names]


def kernel_diff(a: KernelProfile | None, b: KernelProfile | None) -> KernelDiff:
    """One kernel of both runs (or of one of them: the other is None)."""
    either = a or b
    assert either is not None, "a kernel of at least one side"

    def of(read: Callable[[KernelProfile], float | None]) -> FigureChange:
        return figure(None if a is None else read(a), None if b is None else read(b))

    return KernelDiff(
        name=either.name,
        side="both" if a and b else "a" if a else "b",
        launches_a=a.launches if a else None,
        launches_b=b.launches if b else None,
        duration_us=of(lambda k: k.duration_us),
        sm_throughput_pct=of(lambda k: k.sm_throughput_pct),
        memory_throughput_pct=of(lambda k: k.memory_throughput_pct),
        achieved_occupancy_pct=of(lambda k: k.achieved_occupancy_pct),
        registers_per_thread=of(lambda k: k.registers_per_thread),
        shared_memory_per_block_bytes=of(lambda k: k.shared_memory_per_block_bytes),
        dram_bytes_read=of(lambda k: k.dram_bytes_read),
        dram_bytes_written=of(lambda k: k.dram_bytes_written),
        flops=of(lambda k: k.flops),
        stalls=_stalls(a, b),
    )


def match_kernels(a: ProfileReport, b: ProfileReport) -> list[KernelDiff]:
    """A's kernels in A's order, each beside B's kernel of the same name; then A's that B lacks, then B's that A
    lacks. Two kernels of one name in one report (templates the runner did not tell apart) pair in order."""
    waiting: dict[str, list[KernelProfile]] = defaultdict(list)
    for kernel in b.kernels:
        waiting[kernel.name].append(kernel)
    matched: list[KernelDiff] = []
    only_a: list[KernelDiff] = []
    for kernel in a.kernels:
        if waiting[kernel.name]:
            matched.append(kernel_diff(kernel, waiting[kernel.name].pop(0)))
        else:
            only_a.append(kernel_diff(kernel, None))
    left = {id(k) for kernels in waiting.values() for k in kernels}
    only_b = [kernel_diff(None, k) for k in b.kernels if id(k) in left]
    return [*matched, *only_a, *only_b]


def totals(a: ProfileReport, b: ProfileReport) -> ProfileTotals:
    duration = figure(a.duration_us, b.duration_us)
    speedup = a.duration_us / b.duration_us if a.kernels and b.kernels and b.duration_us > 0 else None
    return ProfileTotals(
        duration_us=duration,
        measured_flops=figure(a.measured_flops, b.measured_flops),
        measured_dram_bytes=figure(a.measured_dram_bytes, b.measured_dram_bytes),
        speedup=speedup,
    )


def _notes(a_run: ProfiledRun, a: ProfileReport, b_run: ProfiledRun, b: ProfileReport) -> list[str]:
    """What makes the two profiles measure different things, beyond the code: a reader weighs the figures by it."""
    notes: list[str] = []
    if a.case_name != b.case_name:
        notes.append(
            f"A profiled case {a.case_name} and B case {b.case_name}: different shapes, so the times and byte counts "
            "differ for that reason too. Profile both on one case (`--profile-case`) for a like-for-like diff."
        )
    if a_run.dtype != b_run.dtype:
        notes.append(f"A runs in {a_run.dtype} and B in {b_run.dtype}: the FLOPs and bytes are of different types.")
    if a_run.device != b_run.device:
        notes.append(f"A ran on {a_run.device} and B on {b_run.device}: two models of one GPU type.")
    if a_run.problem_version != b_run.problem_version:
        notes.append(
            f"A ran version {a_run.problem_version} of the problem and B version {b_run.problem_version}: its cases "
            "or its check may have changed between them."
        )
    for side, report in (("A", a), ("B", b)):
        hidden = max(0, report.kernel_count - sum(k.launches for k in report.kernels))
        if hidden:
            notes.append(f"{side} launched {hidden} more kernels than it lists: the totals leave them out.")
    return notes


def diff_reports(
    a_run: ProfiledRun,
    a: ProfileReport,
    b_run: ProfiledRun,
    b: ProfileReport,
    *,
    problem: str,
    gpu_type: str,
    b_chosen: BChoice = "given",
) -> ProfileDiff:
    """The diff of two profiles, A the one compared from, B the one compared to."""
    return ProfileDiff(
        problem=problem,
        gpu_type=gpu_type,
        a=a_run,
        b=b_run,
        b_chosen=b_chosen,
        kernels=match_kernels(a, b),
        totals=totals(a, b),
        notes=_notes(a_run, a, b_run, b),
    )


# -- as text -----------------------------------------------------------------------------------------------------


def _plain(value: float, unit: Unit) -> str:
    """A figure as one profile's table prints it."""
    if unit == "duration":
        return format_duration(value)
    if unit == "percent":
        return format_percent(value)
    if unit == "shared":
        return format_shared(int(value))
    if unit == "bytes":
        return format_amount(int(value), "B")
    if unit == "flops":
        return format_amount(int(value), "FLOP")
    return f"{value:,.0f}"


def format_value(value: float | None, unit: Unit) -> str:
    return "-" if value is None else _plain(value, unit)


def format_change(change: FigureChange, unit: Unit) -> str:
    """ "-27.81 ms (-58.4 %)"; a percentage figure moves in points ("+28.1 pt (+65.3 %)"); "same" when it did not
    move, "-" when one side lacks it."""
    if change.change is None:
        return "-"
    if change.change == 0:
        return "same"
    sign = "+" if change.change > 0 else "-"
    size = abs(change.change)
    moved = f"{size:.1f} pt" if unit == "percent" else _plain(size, unit)
    pct = (
        "" if change.change_pct is None else f" ({'+' if change.change_pct > 0 else '-'}{abs(change.change_pct):.1f} %)"
    )
    return f"{sign}{moved}{pct}"


@dataclass(frozen=True)
class DiffLine:
    """One figure of a diff, formatted: in the order of HEADERS."""

    label: str
    a: str
    b: str
    change: str

    def cells(self) -> tuple[str, str, str, str]:
        return (self.label, self.a, self.b, self.change)


def _line(label: str, change: FigureChange, unit: Unit) -> DiffLine:
    return DiffLine(label, format_value(change.a, unit), format_value(change.b, unit), format_change(change, unit))


def kernel_lines(kernel: KernelDiff) -> list[DiffLine]:
    """A kernel's figures, A beside B, in the order of one profile's table."""
    return [
        _line("time", kernel.duration_us, "duration"),
        _line("SM throughput", kernel.sm_throughput_pct, "percent"),
        _line("mem throughput", kernel.memory_throughput_pct, "percent"),
        _line("occupancy", kernel.achieved_occupancy_pct, "percent"),
        _line("regs", kernel.registers_per_thread, "count"),
        _line("smem/block", kernel.shared_memory_per_block_bytes, "shared"),
        _line("DRAM read", kernel.dram_bytes_read, "bytes"),
        _line("DRAM written", kernel.dram_bytes_written, "bytes"),
        _line("FLOP", kernel.flops, "flops"),
    ]


def stall_line(kernel: KernelDiff) -> str:
    """ "long_scoreboard 91 % → 14 %, mio_throttle - → 45 %": each reason's share of the stall cycles in A and B."""

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value * 100:.0f} %"

    return ", ".join(f"{s.name} {share(s.a_share)} → {share(s.b_share)}" for s in kernel.stalls) or "-"


def kernel_title(kernel: KernelDiff) -> str:
    """The kernel's name, how often each side ran it when more than once, and the side it ran on alone."""
    launches = {kernel.launches_a, kernel.launches_b} - {None, 1}
    counted = f" ×{kernel.launches_a or '-'}/{kernel.launches_b or '-'}" if launches else ""
    alone = {"both": "", "a": " (A only)", "b": " (B only)"}[kernel.side]
    return f"{kernel.name}{counted}{alone}"


def total_lines(diff: ProfileDiff) -> list[DiffLine]:
    """The totals over each profile's listed kernels."""
    t = diff.totals
    return [
        _line("total time", t.duration_us, "duration"),
        _line("FLOP counted", t.measured_flops, "flops"),
        _line("DRAM moved", t.measured_dram_bytes, "bytes"),
    ]


def run_label(run: ProfiledRun) -> str:
    """ "#12 matmul_naive.cu by ada (cuda, float32, case m=4096,n=4096,k=4096)"."""
    return f"#{run.submission_id} {run.file_name} by {run.owner} ({run.language}, {run.dtype}, case {run.case_name})"


def headline(diff: ProfileDiff) -> str:
    """The answer in one line: how B's total time compares with A's."""
    t = diff.totals
    a, b = t.duration_us.a, t.duration_us.b
    if t.speedup is None or a is None or b is None:
        return "One of the two profiles saw no kernel run: there is no time to compare."
    if a == b:
        return f"B took as long as A: {format_duration(b)}."
    pct = abs(t.duration_us.change_pct or 0.0)
    times = f"B took {format_duration(b)} against A's {format_duration(a)}"
    if b < a:
        return f"{times}: {format_ratio(t.speedup)} faster ({pct:.1f} % less time)."
    return f"{times}: {format_ratio(1 / t.speedup)} slower ({pct:.1f} % more time)."


def choice_line(diff: ProfileDiff) -> str:
    """Why B is the run it is."""
    return f"B is {CHOICE_TEXT[diff.b_chosen]}."
