"""sum-dim: the sum along one dimension; the shape comes as a size_t device array."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class SumDim(DimReduction):
    slug = "sum-dim"
    title = "Sum Over Dimension"
    description = (
        "Sum an N-d float tensor along dimension `dim`: the output has the input's shape without `dim`. The "
        "sizes come in `shape`, a device array of `ndim` `size_t` values. Any order of the additions is "
        "accepted in float32."
    )
    parameters = dim_signature("size_t", None)
    flops_formula = "outputs · (R − 1), R = shape[dim] (one add per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().sum(dim=dim)
