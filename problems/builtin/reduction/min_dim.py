"""min-dim: the smallest value along one dimension; the shape comes as a size_t array in host memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class MinDim(DimReduction):
    slug = "min-dim"
    # Version 1 passed `shape` in device memory and dropped the reduced dimension from the output's shape.
    version = 2
    title = "Min Over Dimension"
    description = (
        "Write the smallest value along dimension `dim` of an N-d float tensor, for every position of the other "
        "dimensions; the output keeps the input's rank with `shape[dim]` = 1 (PyTorch's `keepdim=True`). The "
        "sizes come in `shape`, an array of `ndim` `size_t` values in host memory (read it in `solution`'s host "
        "code, not in a kernel). The answer is one of the inputs, so it is exact."
    )
    parameters = dim_signature("size_t", None, "the input's shape with `shape[dim]` = 1", shape_memory="host")
    keepdim = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one compare per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().amin(dim=dim)
