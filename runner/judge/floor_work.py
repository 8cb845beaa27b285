"""The work no correct solution of a case can avoid between the start and stop events: what the physical floor
(runner.gpus.physical_floor) divides by the GPU's fastest rates.

The problem declares which bounds hold (`Problem.time_floor`); this module counts what they guarantee on the
device. Only traffic that must reach device memory inside the timed window counts:

- Reads. Every correct solution reads the input bytes `get_bytes` counts (the problem's `read_share` of them
  where its inputs' structure lets a solution skip some). With the L2 flushed before the call (the `arena`
  method reads 4x L2 first), they come from DRAM. Without a flush (`seed`), up to one L2 of them may still be
  cached from the previous call on the same input set, so one L2 is taken off.
- Writes. A written line can stay dirty in L2 until after the stop event, so outputs count only beyond one L2:
  the part that cannot fit must have been written back inside the window.
- FLOPs, only where the problem declares its formula a lower bound: otherwise an FFT, an NTT or Strassen does
  less arithmetic than the formula, and a floor built on it would reject the cleverer algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass

from problems.base import TimeFloor


@dataclass(frozen=True)
class UnavoidableWork:
    """Bytes that must cross device memory inside the timed window, and FLOPs where they are a bound (None: not)."""

    dram_bytes: int
    flops: int | None
    basis: str

    def describe(self) -> str:
        flops = "FLOPs not a bound" if self.flops is None else f"{self.flops:,} FLOPs"
        return f"{self.basis}; {flops}"


def unavoidable_work(
    floor: TimeFloor,
    *,
    flops: int,
    counted_bytes: int,
    output_bytes: int,
    l2_bytes: int,
    l2_flushed: bool,
) -> UnavoidableWork:
    """What a case guarantees: `counted_bytes` is the problem's `get_bytes` (inputs and outputs), `output_bytes` the
    size of the output buffers the judge allocated, `l2_bytes` the device's L2 size.

    The reads are what `get_bytes` counts beyond the outputs: a count that leaves some output out (a scalar loss)
    then reads a little low, never high.
    """
    counted_reads = max(counted_bytes - output_bytes, 0)
    reads = int(counted_reads * floor.read_share)
    if not l2_flushed:
        reads = max(reads - l2_bytes, 0)
    writes = max(output_bytes - l2_bytes, 0)
    origin = "after the L2 flush" if l2_flushed else "less one L2 that may hold them"
    basis = (
        f"{reads:,} bytes read ({floor.read_share:.0%} of the inputs, {origin}) and {writes:,} written "
        f"(the outputs beyond one L2 of {l2_bytes:,} bytes)"
    )
    return UnavoidableWork(reads + writes, flops if floor.counts_flops else None, basis)
