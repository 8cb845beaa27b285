"""A profile as people read it: each kernel's figures and the summary of mode `profile`, formatted once.

The CLI (`arena/render.py`) and the Discord embed (`bot/ui/profile.py`) both take their text from here, as
timed results take theirs from `core.views.result`, so that one profile shows the same digits wherever it is
read. Durations, bytes and FLOPs have two decimals in the unit that keeps them between 1 and 1000, as Nsight
Compute prints them, so that every figure can be found again in the attached `profile.txt`. Pure functions of
`contract.wire` models.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import PurePosixPath

from contract.wire import KernelProfile, ProfileArtifact, ProfileReport, StallReason
from core.views.result import format_rate

# The table has two halves, each keyed by the kernel's name, so that each fits a terminal's width.
LAUNCH_HEADERS = (
    "kernel",
    "time",
    "SM throughput",
    "mem throughput",
    "occupancy",
    "regs",
    "smem/block",
    "block",
    "grid",
)
TRAFFIC_HEADERS = ("kernel", "DRAM read / written", "FLOP", "top stalls")
STALLS_SHOWN = 3

# What each of Nsight Compute's warp-stall reasons means, for a reader who does not know its names (from its
# Kernel Profiling Guide, "Warp Scheduler States").
STALL_HINTS: dict[str, str] = {
    "long_scoreboard": "waiting on global or local memory loads (L1TEX); coalesce them, or reuse data in shared memory",
    "short_scoreboard": "waiting on shared memory or a special math function (MIO); look for bank conflicts",
    "barrier": "waiting at `__syncthreads()` for the rest of the block; uneven work between warps",
    "membar": "waiting on a memory fence (`__threadfence()`) to complete",
    "math_pipe_throttle": "the arithmetic pipe it needs is busy; compute-bound on that pipe",
    "mio_throttle": "the shared-memory and special-function queue is full; too many such instructions",
    "lg_throttle": "the global/local memory queue is full; fewer, wider loads (vectorised) relieve it",
    "wait": "a fixed-latency dependency between instructions; more independent work per thread hides it",
    "not_selected": "ready, but another warp was picked to issue; the scheduler has work enough",
    "no_instruction": "no instruction fetched yet; an instruction-cache miss or a jump",
    "dispatch_stall": "the dispatcher held the instruction back; a pipeline conflict",
    "branch_resolving": "waiting for a branch target or a divergent branch to resolve",
    "drain": "waiting for its memory stores to drain before the warp exits",
    "tex_throttle": "the texture unit's queue is full",
    "imc_miss": "waiting on a miss in the constant cache",
    "sleeping": "its threads sleep (`__nanosleep()`) or wait to be scheduled again",
    "gmma": "waiting on a warpgroup matrix multiply (wgmma) to finish",
    "misc": "a rare reason of its own (Nsight Compute's 'misc')",
}

NO_KERNELS = "The profiler saw no kernel launch in the profiled call: nothing ran on the GPU."

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def format_duration(us: float) -> str:
    """A runtime in microseconds as Nsight Compute prints it: two decimals in ns, µs, ms or s."""
    for scale, unit in ((1e6, "s"), (1e3, "ms"), (1.0, "µs")):
        if us >= scale:
            return f"{us / scale:.2f} {unit}"
    return f"{us * 1e3:.2f} ns"


def format_amount(value: int, unit: str) -> str:
    """Bytes ("B") or FLOPs ("FLOP") with a decimal prefix and two decimals: "4.26 GB", "137.44 GFLOP"."""
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value} {unit}"


def format_shared(value: int) -> str:
    """Shared memory per block, in KiB as the hardware's limits are given (228 KiB per SM on an H100)."""
    return f"{value} B" if value < 1024 else f"{value / 1024:.4g} KiB"


def format_percent(value: float) -> str:
    """A percentage with one decimal; a whole one without ("100 %": a theoretical occupancy often is)."""
    return f"{value:.0f} %" if value == round(value) else f"{value:.1f} %"


def format_ratio(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else f"{value:,.0f}×"


def _dims(dims: tuple[int, int, int] | None) -> str:
    return "-" if dims is None else "×".join(str(d) for d in dims)


def _percent(value: float | None) -> str:
    return "-" if value is None else format_percent(value)


def format_stall(stall: StallReason) -> str:
    return f"{stall.name} {stall.share * 100:.0f} %"


def kernel_label(kernel: KernelProfile) -> str:
    """The kernel's name, and how often it ran when more than once ("fill ×3")."""
    return kernel.name if kernel.launches == 1 else f"{kernel.name} ×{kernel.launches}"


def occupancy(kernel: KernelProfile) -> str:
    """Achieved against theoretical occupancy: "99.4 % of 100 %"."""
    achieved, theoretical = kernel.achieved_occupancy_pct, kernel.theoretical_occupancy_pct
    if achieved is None:
        return "-"
    if theoretical is None:
        return format_percent(achieved)
    return f"{format_percent(achieved)} of {format_percent(theoretical)}"


def dram_traffic(kernel: KernelProfile) -> str:
    """Bytes read from and written to DRAM: "4.26 GB / 69.60 MB"."""
    read, written = kernel.dram_bytes_read, kernel.dram_bytes_written
    if read is None and written is None:
        return "-"
    return " / ".join("-" if n is None else format_amount(n, "B") for n in (read, written))


@dataclass(frozen=True)
class KernelRow:
    """One profiled kernel, each figure formatted; the order of LAUNCH_HEADERS, then TRAFFIC_HEADERS."""

    name: str
    time: str
    sm: str
    memory: str
    occupancy: str
    registers: str
    shared: str
    block: str
    grid: str
    dram: str
    flops: str
    stalls: str

    def launch_cells(self) -> tuple[str, ...]:
        return (self.name, self.time, self.sm, self.memory, self.occupancy, self.registers, self.shared,
                self.block, self.grid)  # fmt: skip

    def traffic_cells(self) -> tuple[str, ...]:
        return (self.name, self.dram, self.flops, self.stalls)

    def labelled(self) -> list[tuple[str, str]]:
        """(header, cell) for every figure but the name, in table order."""
        return [
            *zip(LAUNCH_HEADERS[1:], self.launch_cells()[1:], strict=True),
            *zip(TRAFFIC_HEADERS[1:], self.traffic_cells()[1:], strict=True),
        ]


def kernel_row(kernel: KernelProfile) -> KernelRow:
    shared = kernel.shared_memory_per_block_bytes
    return KernelRow(
        name=kernel_label(kernel),
        time=format_duration(kernel.duration_us),
        sm=_percent(kernel.sm_throughput_pct),
        memory=_percent(kernel.memory_throughput_pct),
        occupancy=occupancy(kernel),
        registers="-" if kernel.registers_per_thread is None else str(kernel.registers_per_thread),
        shared="-" if shared is None else format_shared(shared),
        block=_dims(kernel.block),
        grid=_dims(kernel.grid),
        dram=dram_traffic(kernel),
        flops="-" if kernel.flops is None else format_amount(kernel.flops, "FLOP"),
        stalls=", ".join(format_stall(s) for s in kernel.stalls[:STALLS_SHOWN]) or "-",
    )


def kernel_rows(report: ProfileReport) -> list[KernelRow]:
    return [kernel_row(k) for k in report.kernels]


def stall_hint(report: ProfileReport) -> str | None:
    """The top stall of the longest kernel, and what it means: "long_scoreboard (91 %): waiting on …"."""
    top = next((k.stalls[0] for k in report.kernels if k.stalls), None)
    if top is None:
        return None
    hint = STALL_HINTS.get(top.name, "see Nsight Compute's Kernel Profiling Guide")
    return f"{top.name} ({top.share * 100:.0f} % of stalls): {hint}"


def _compared(measured: int | None, formula: int, unit: str, verb: str) -> str:
    """A counted figure beside the problem's formula: "137.44 GFLOP counted, formula 137.44 GFLOP (1.00×)"."""
    counted = "not measured" if measured is None else f"{format_amount(measured, unit)} {verb}"
    if not formula:
        return f"{counted}, no formula figure"
    text = f"{counted}, formula {format_amount(formula, unit)}"
    return text if measured is None else f"{text} ({format_ratio(measured / formula)})"


def _intensity(flops: int | None, nbytes: int | None) -> str:
    if flops is None or not nbytes:
        return "-"
    return f"{flops / nbytes:.3g}"


def tensor_note(report: ProfileReport) -> str | None:
    """What ran on the tensor cores, and whether the FLOP line counts it; None when nothing did.

    A kernel's tensor FLOPs come from the tensor path's ops counters. A matrix instruction always does math, so
    matrix instructions with no ops counted mean the counters missed them (an older runner, a GPU or a source type
    without the counters the profile asks for): the FLOP line falls short, and the note says so."""
    instructions = sum(k.tensor_instructions or 0 for k in report.kernels)
    counted = sum(k.tensor_flops or 0 for k in report.kernels)
    uncounted = any(k.tensor_instructions and not k.tensor_flops for k in report.kernels)
    if uncounted:
        return (
            f"{instructions:,} tensor-core instructions ran: their FLOPs are not counted by the SASS counters, so the "
            "count above is short of the work done"
        )
    if not counted:
        return None
    return (
        f"{format_amount(counted, 'FLOP')} of the count above ran on the tensor cores "
        f"({instructions:,} matrix instruction{'s' if instructions != 1 else ''})"
    )


@dataclass(frozen=True)
class ProfileSummary:
    """The profile's headline lines, formatted; `lines()` gives them labelled, in reading order."""

    case: str
    duration: str
    flops: str
    tensor_note: str | None
    dram: str
    intensity: str
    achieved: str
    stall: str | None

    def lines(self) -> list[tuple[str, str]]:
        found = [
            ("profiled", self.case),
            ("duration", self.duration),
            ("FLOP", self.flops),
            ("tensor cores", self.tensor_note),
            ("DRAM", self.dram),
            ("intensity", self.intensity),
            ("achieved", self.achieved),
            ("top stall", self.stall),
        ]
        return [(label, text) for label, text in found if text is not None]


def hidden_launches(report: ProfileReport) -> int:
    """Kernel launches the profiler saw beyond those of the kernels listed."""
    return max(0, report.kernel_count - sum(k.launches for k in report.kernels))


def summary(report: ProfileReport) -> ProfileSummary:
    duration_us = report.duration_us
    launches = sum(k.launches for k in report.kernels)
    hidden = hidden_launches(report)
    duration = f"{format_duration(duration_us)} over {launches} kernel launch{'es' if launches != 1 else ''}"
    if hidden:
        duration += f" ({hidden} more not listed, nor counted here)"
    flops, nbytes = report.measured_flops, report.measured_dram_bytes
    seconds = duration_us / 1e6
    gflops = format_rate(flops / seconds / 1e9) if flops is not None and seconds > 0 else "-"
    gbps = format_rate(nbytes / seconds / 1e9) if nbytes is not None and seconds > 0 else "-"
    formula = _intensity(report.formula_flops, report.formula_bytes)
    return ProfileSummary(
        case=f"{report.case_name} (case {report.case_index}) by {report.tool or 'the profiler'}",
        duration=duration,
        flops=_compared(flops, report.formula_flops, "FLOP", "counted"),
        tensor_note=tensor_note(report),
        dram=_compared(report.measured_dram_bytes, report.formula_bytes, "B", "moved"),
        intensity=f"{_intensity(flops, nbytes)} FLOP/byte measured (formula {formula})",
        achieved=f"{gflops} GFLOPS, {gbps} GB/s",
        stall=stall_hint(report),
    )


def artifact_size(artifact: ProfileArtifact) -> int:
    """The decoded size of an artifact, read from its base64 length (nothing decoded)."""
    text = artifact.data_b64.strip()
    return len(text) * 3 // 4 - text[-2:].count("=")


def artifact_file_name(artifact: ProfileArtifact) -> str:
    """The artifact's name as a file name, never a path: the runner names its files, and whatever it sends, a
    file written or attached under this name stays where it is put."""
    name = PurePosixPath(artifact.name.replace("\\", "/")).name
    return "artifact" if name in ("", ".", "..") else name


def decode_artifact(artifact: ProfileArtifact) -> bytes | None:
    """The artifact's bytes; None when they are not valid base64."""
    try:
        return base64.b64decode(artifact.data_b64, validate=True)
    except (binascii.Error, ValueError):
        return None


def artifact_list(report: ProfileReport) -> str:
    """ "profile.txt (9.05 kB), profile.ncu-rep (116.51 kB)": what came with the profile."""
    return ", ".join(f"{a.name} ({format_amount(artifact_size(a), 'B')})" for a in report.artifacts) or "none"
