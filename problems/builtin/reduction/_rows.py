"""Row-wise softmax problems over an M×N matrix: shared cases and the input draw that punishes a missing max.

Each row is 2·N(0, 1) plus a row offset drawn from [-30, 90): exp() of such a row overflows float32 unless the
row maximum is subtracted first, and the offsets differ by row so that no single shift works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import DType
from problems.library import Dims

if TYPE_CHECKING:
    import torch

# M×N: ragged rows, square, one long ragged row (past any one-block-per-row shared-memory tile) and the largest.
GPU_MN: tuple[Dims, ...] = ((1000, 1003), (4096, 4096), (777, 65537), (8192, 8192))
CPU_MN: tuple[Dims, ...] = ((7, 33), (64, 1000), (129, 2049))
ROW_OFFSET = (-30.0, 90.0)
SPREAD = 2.0


def offset_rows(shape: tuple[int, ...], dim: int, dtype: DType, gen: torch.Generator) -> torch.Tensor:
    """SPREAD·N(0, 1) values plus an offset from ROW_OFFSET shared by each slice along `dim`, in `dtype`."""
    import torch

    from problems.inputs import torch_dtype

    offset_shape = list(shape)
    offset_shape[dim] = 1
    values = torch.randn(shape, generator=gen, device=gen.device).mul_(SPREAD)
    low, high = ROW_OFFSET
    offsets = torch.rand(offset_shape, generator=gen, device=gen.device).mul_(high - low).add_(low)
    return values.add_(offsets).to(torch_dtype(dtype))
