"""Nsight Compute's raw page (`ncu --import R --csv --page raw`) read into `KernelProfile`s.

The page has one row per profiled kernel launch and one column per metric, under a second header row of units.
Values may carry thousands separators and any of ncu's units (with `--print-units base` or without), and a
metric that was not collected reads "n/a" or "no data": such a figure is None, never zero. Launches of the same
kernel are summed (durations, bytes, FLOPs) and described by their longest launch (rates, occupancy, stalls).

FLOPs come from two kinds of counter. The SASS counters see the CUDA cores' adds, multiplies and FMAs, and nothing
of a matrix instruction. The tensor path's ops counters (`sm__ops_path_tensor_src_*`) see each math op the tensor
cores ran, two per multiply-add, for HMMA, IMMA, DMMA and Hopper's warpgroup GMMA alike: on an H100 they read exactly
2·4096³ for a 4096³ fp16 GEMM, by WMMA (HMMA) or by cuBLAS (HGMMA), and zero for an FFMA-only kernel
(tests/fixtures/ncu/README.md). Tensor-core instructions are the tensor pipe's less its HFMA2.MMA: the compiler
sets registers with `HFMA2.MMA Rd, -RZ, RZ, 0, 0` (seen in sm_90 code), which issues on the tensor pipe without
any matrix math, so `sm__inst_executed_pipe_tensor` (and `_op_hmma` with it) reads millions for a plain FP32 kernel.
A metric the GPU does not have reads "n/a" on the page, so every architecture's names can be asked for at once.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from contract.wire import KernelProfile, StallReason

# Every kernel shown is one of the top ones by summed duration; the rest are counted in the report.
TOP_KERNELS = 5
TOP_STALLS = 4

# ncu's units as the raw page prints them, in the base unit of their kind (bytes, microseconds).
_SCALE = {
    "byte": 1.0,
    "kbyte": 1e3,
    "mbyte": 1e6,
    "gbyte": 1e9,
    "tbyte": 1e12,
    "ns": 1e-3,
    "nsecond": 1e-3,
    "usecond": 1.0,
    "us": 1.0,
    "msecond": 1e3,
    "ms": 1e3,
    "second": 1e6,
    "s": 1e6,
}
# FLOPs as the SASS counters see them: one per add or multiply, two per fused multiply-add, in fp32, fp64, fp16.
FLOP_COUNTERS: dict[str, int] = {
    f"smsp__sass_thread_inst_executed_op_{precision}{op}_pred_on.sum": 2 if op == "fma" else 1
    for precision in ("f", "d", "h")
    for op in ("add", "mul", "fma")
}
# Every warp instruction of the tensor pipe, and the HFMA2.MMA among them: register moves and packed-half FMAs that
# the compiler issues there, no matrix math. The difference is the MMA instructions (HMMA, IMMA, DMMA, GMMA).
TENSOR_PIPE = "sm__inst_executed_pipe_tensor.sum"
TENSOR_PIPE_HFMA2 = "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"
# The tensor pipe's instructions by kind, collected for the report file (ncu's details page); on Hopper `_op_hmma`
# also counts HGMMA and HFMA2.MMA, so none of these alone is the matrix instruction count.
TENSOR_KINDS: tuple[str, ...] = tuple(
    f"sm__inst_executed_pipe_tensor_op_{kind}.sum" for kind in ("hmma", "gmma", "imma", "dmma")
)
# Math ops on the tensor path, one group per source type: the first alternative the page has a figure for is the
# group's count (Hopper has `src_fp16`; Ampere splits it by destination type), so no op is counted twice.
TENSOR_OPS: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("sm__ops_path_tensor_src_fp16.sum",),
     ("sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum")),
    (("sm__ops_path_tensor_src_bf16_dst_fp32.sum",),),
    (("sm__ops_path_tensor_src_tf32_dst_fp32.sum",),),
    (("sm__ops_path_tensor_src_fp64.sum",),),
    (("sm__ops_path_tensor_src_fp8.sum",),),
    (("sm__ops_path_tensor_src_int8.sum",),),
    (("sm__ops_path_tensor_src_int4.sum",),),
    (("sm__ops_path_tensor_src_int1.sum",),),
)  # fmt: skip
TENSOR_OPS_COUNTERS: tuple[str, ...] = tuple(name for group in TENSOR_OPS for names in group for name in names)
# The metrics a profile asks for beyond its sections (ncu --metrics): bytes to and from DRAM, and what FLOPs are.
EXTRA_METRICS: tuple[str, ...] = (
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    *FLOP_COUNTERS,
    TENSOR_PIPE,
    TENSOR_PIPE_HFMA2,
    *TENSOR_KINDS,
    *TENSOR_OPS_COUNTERS,
)
# The sections whose metrics the report reads.
SECTIONS: tuple[str, ...] = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "MemoryWorkloadAnalysis")

_STALL = re.compile(r"^smsp__average_warps_issue_stalled_(?P<name>[a-z0-9_]+)_per_issue_active\.ratio$")
# "selected" is the cycle a warp issues, not a stall.
_NOT_A_STALL = frozenset({"selected"})


class NcuReportError(ValueError):
    """The profiler's output is not a raw page this module can read."""


@dataclass(frozen=True)
class _Row:
    values: dict[str, str]
    units: dict[str, str]

    def text(self, name: str) -> str:
        return self.values.get(name, "").strip()

    def number(self, name: str) -> float | None:
        """The metric as a plain number (a count, a percentage, a ratio); None when missing."""
        return _plain(self.text(name))

    def scaled(self, name: str, base: str) -> float | None:
        """The metric in the base unit `base` ("byte" or "us"); None when missing or in an unknown unit."""
        value = self.number(name)
        if value is None:
            return None
        # Per-something units ("Kbyte/block") scale by their first part.
        unit = self.units.get(name, "").strip().lower().split("/")[0]
        factor = _SCALE.get(unit) if unit else 1.0
        return None if factor is None else value * factor / _SCALE[base]


def _plain(text: str) -> float | None:
    text = text.replace(",", "").strip()
    if not text or text.lower() in ("n/a", "no data", "nan", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _integer(value: float | None) -> int | None:
    return None if value is None else round(value)


def _triple(text: str) -> tuple[int, int, int] | None:
    parts = re.findall(r"\d+", text)
    return (int(parts[0]), int(parts[1]), int(parts[2])) if len(parts) == 3 else None


def short_name(signature: str) -> str:
    """`void matmul_kernel<float>(const float *, ...)` -> `matmul_kernel<float>`: the name without its parameters."""
    depth, cut = 0, len(signature)
    for i, ch in enumerate(signature):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    name = signature[:cut].strip()
    return name.removeprefix("void ").strip() or signature.strip()


def read_rows(text: str) -> list[_Row]:
    """The launches on a raw page: the header, the units row, then one row per launch."""
    start = text.find('"ID"')
    if start < 0:
        raise NcuReportError('the profiler\'s output has no raw page (no "ID" column)')
    rows = list(csv.reader(io.StringIO(text[start:])))
    if len(rows) < 2:
        raise NcuReportError("the profiler's raw page has no units row")
    header = rows[0]
    # The units row is the one whose ID cell is empty; a page printed without it starts its launches at once.
    has_units = not rows[1] or not rows[1][0].strip()
    units = dict(zip(header, rows[1], strict=False)) if has_units else {}
    body = rows[2:] if has_units else rows[1:]
    return [_Row(dict(zip(header, row, strict=False)), units) for row in body if row and row[0].strip()]


def _stalls(row: _Row) -> list[StallReason]:
    found: list[tuple[str, float]] = []
    for name in row.values:
        match = _STALL.match(name)
        if match is None or match["name"] in _NOT_A_STALL:
            continue
        value = row.number(name)
        if value is not None and value > 0:
            found.append((match["name"], value))
    total = sum(v for _, v in found)
    found.sort(key=lambda item: item[1], reverse=True)
    return [StallReason(name=n, cycles_per_issue=v, share=v / total) for n, v in found[:TOP_STALLS]] if total else []


def _cuda_core_flops(row: _Row) -> int | None:
    counts = [(row.number(name), weight) for name, weight in FLOP_COUNTERS.items() if name in row.values]
    if not counts or all(c is None for c, _ in counts):
        return None
    return round(sum((c or 0.0) * weight for c, weight in counts))


def _tensor_flops(row: _Row) -> int | None:
    """The tensor path's math ops; None where the page has none of its counters (an older ncu, another chip)."""
    total: float | None = None
    for group in TENSOR_OPS:
        for names in group:
            figures = [row.number(name) for name in names]
            if any(f is not None for f in figures):
                total = (total or 0.0) + sum(f or 0.0 for f in figures)
                break
    return None if total is None else round(total)


def _tensor_instructions(row: _Row, tensor_flops: int | None) -> int | None:
    """Matrix instructions on the tensor pipe: its count less the HFMA2.MMA. Where the page has no HFMA2.MMA figure,
    the ops counters decide: no tensor op means the pipe ran register moves only, as every matrix instruction does
    math; without those either, the pipe's count is all there is."""
    pipe = row.number(TENSOR_PIPE)
    if pipe is None:
        return None
    moves = row.number(TENSOR_PIPE_HFMA2)
    if moves is not None:
        return max(0, round(pipe - moves))
    return 0 if tensor_flops == 0 else round(pipe)


def _flops(row: _Row) -> tuple[int | None, int | None]:
    """(every FLOP counted, those on the tensor cores): the CUDA cores' from the SASS counters plus the tensor
    path's; None where the SASS counters were not collected."""
    cuda_cores, tensor = _cuda_core_flops(row), _tensor_flops(row)
    return (None if cuda_cores is None else cuda_cores + (tensor or 0)), tensor


def _shared_memory(row: _Row) -> int | None:
    static = row.scaled("launch__shared_mem_per_block_static", "byte")
    dynamic = row.scaled("launch__shared_mem_per_block_dynamic", "byte")
    if static is None and dynamic is None:
        return None
    return round((static or 0.0) + (dynamic or 0.0))


def _launch(row: _Row) -> KernelProfile:
    signature = row.text("Kernel Name")
    theoretical = row.number("sm__maximum_warps_per_active_cycle_pct")
    flops, tensor_flops = _flops(row)
    return KernelProfile(
        name=short_name(signature),
        signature=signature,
        duration_us=row.scaled("gpu__time_duration.sum", "us") or 0.0,
        sm_throughput_pct=row.number("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        memory_throughput_pct=row.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_throughput_pct=row.number("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        achieved_occupancy_pct=row.number("sm__warps_active.avg.pct_of_peak_sustained_active"),
        theoretical_occupancy_pct=theoretical,
        registers_per_thread=_integer(row.number("launch__registers_per_thread")),
        shared_memory_per_block_bytes=_shared_memory(row),
        block=_triple(row.text("Block Size")),
        grid=_triple(row.text("Grid Size")),
        stalls=_stalls(row),
        dram_bytes_read=_integer(row.scaled("dram__bytes_read.sum", "byte")),
        dram_bytes_written=_integer(row.scaled("dram__bytes_write.sum", "byte")),
        flops=flops,
        tensor_flops=tensor_flops,
        tensor_instructions=_tensor_instructions(row, tensor_flops),
    )


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _merge(launches: Sequence[KernelProfile]) -> KernelProfile:
    """One kernel's launches as one entry: totals summed, the rest from its longest launch."""
    longest = max(launches, key=lambda k: k.duration_us)
    totals = launches[0]
    for other in launches[1:]:
        totals = totals.model_copy(
            update={
                "dram_bytes_read": _add(totals.dram_bytes_read, other.dram_bytes_read),
                "dram_bytes_written": _add(totals.dram_bytes_written, other.dram_bytes_written),
                "flops": _add(totals.flops, other.flops),
                "tensor_flops": _add(totals.tensor_flops, other.tensor_flops),
                "tensor_instructions": _add(totals.tensor_instructions, other.tensor_instructions),
            }
        )
    return longest.model_copy(
        update={
            "launches": len(launches),
            "duration_us": sum(k.duration_us for k in launches),
            "dram_bytes_read": totals.dram_bytes_read,
            "dram_bytes_written": totals.dram_bytes_written,
            "flops": totals.flops,
            "tensor_flops": totals.tensor_flops,
            "tensor_instructions": totals.tensor_instructions,
        }
    )


def parse_raw_page(text: str) -> list[KernelProfile]:
    """Every kernel on the page, launches of one kernel merged, the longest in summed duration first."""
    by_signature: dict[str, list[KernelProfile]] = {}
    for row in read_rows(text):
        launch = _launch(row)
        by_signature.setdefault(launch.signature, []).append(launch)
    merged = [_merge(launches) for launches in by_signature.values()]
    return sorted(merged, key=lambda k: k.duration_us, reverse=True)


def launch_count(kernels: Sequence[KernelProfile]) -> int:
    return sum(k.launches for k in kernels)
