"""The sort family's shared rules: int32 data of any sign, scored in GB/s, checked exactly.

A sort does no arithmetic worth counting, so these problems are scored by the bytes a single pass must move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DType
from problems.library import KernelProblem

if TYPE_CHECKING:
    import torch

INT32_MIN, INT32_END = -(1 << 31), 1 << 31


def random_int32(n: int, gen: torch.Generator) -> torch.Tensor:
    """n values from the whole int32 range: negatives included, so every radix pass and the sign bit matter."""
    import torch

    return torch.randint(INT32_MIN, INT32_END, (n,), generator=gen, device=gen.device, dtype=torch.int64).to(
        torch.int32
    )


class SortProblem(KernelProblem):
    """A sort of n elements: one size per case, float32 as the nominal dtype (every buffer states its element)."""

    tags: ClassVar[tuple[str, ...]] = ("sorting", "memory-bound")
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    score_metric = "gbps"
    dim_names = ("n",)
    # n: tiny, ragged (not a multiple of any block size), then up to 64M elements.
    gpu_cases = ((4099,), (1_000_003,), (1 << 24,), (67_108_859,))
    cpu_cases = ((7,), (1001,), (65_537,))
    flops_formula = "0 (scored in GB/s)"

    def flops(self, dims: tuple[int, ...]) -> int:
        return 0
