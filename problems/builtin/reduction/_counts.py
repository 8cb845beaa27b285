"""Bin indices for the histogram problems: half spread evenly, half piled in a narrow peak at a random bin.

The peak makes many threads hit the same few bins at once (the contention a real image histogram has); the
even half keeps every bin in use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def peaked_bins(n: int, bins: int, gen: torch.Generator) -> torch.Tensor:
    """`n` int32 bin indices in [0, bins): even, or a triangular peak about bins/8 wide at a random bin."""
    import torch

    device = gen.device
    even = torch.randint(0, bins, (n,), generator=gen, device=device, dtype=torch.int32)
    width = max(1, bins // 16)
    center = int(torch.randint(0, bins, (1,), generator=gen, device=device))
    peak = torch.randint(0, width + 1, (n,), generator=gen, device=device, dtype=torch.int32)
    peak += torch.randint(0, width + 1, (n,), generator=gen, device=device, dtype=torch.int32)
    peak += center - width + bins  # positive before the modulo
    peak.remainder_(bins)
    in_peak = torch.randint(0, 2, (n,), generator=gen, device=device, dtype=torch.uint8).bool()
    return torch.where(in_peak, peak, even)
