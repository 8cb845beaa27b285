"""max-dim: the largest value along one dimension; the shape comes as a size_t device array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class MaxDim(DimReduction):
    slug = "max-dim"
    # Version 1 dropped the reduced dimension from the output's shape; Tensara keeps it with size 1.
    version = 2
    title = "Max Over Dimension"
    description = (
        "Write the largest value along dimension `dim` of an N-d float tensor, for every position of the other "
        "dimensions; the output keeps the input's rank with `shape[dim]` = 1 (PyTorch's `keepdim=True`). The "
        "sizes come in `shape`, a device array of `ndim` `size_t` values. The answer is one of the inputs, so it "
        "is exact."
    )
    parameters = dim_signature("size_t", None, "the input's shape with `shape[dim]` = 1")
    keepdim = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one compare per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().amax(dim=dim)
