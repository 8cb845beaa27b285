"""sum-dim: the sum along one dimension; the shape comes as a size_t device array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class SumDim(DimReduction):
    slug = "sum-dim"
    # Version 1 dropped the reduced dimension from the output's shape; Tensara keeps it with size 1.
    version = 2
    title = "Sum Over Dimension"
    description = (
        "Sum an N-d float tensor along dimension `dim`: the output keeps the input's rank with `shape[dim]` = 1 "
        "(PyTorch's `keepdim=True`). The sizes come in `shape`, a device array of `ndim` `size_t` values. Any "
        "order of the additions is accepted in float32."
    )
    parameters = dim_signature("size_t", None, "the input's shape with `shape[dim]` = 1")
    keepdim = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one add per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().sum(dim=dim)
