"""mean-dim: the mean along one dimension; the shape comes as a size_t device array."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MeanDim(DimReduction):
    slug = "mean-dim"
    # Version 1 dropped the reduced dimension from the output's shape; Tensara keeps it with size 1.
    version = 2
    title = "Mean Over Dimension"
    description = (
        "Average an N-d float tensor along dimension `dim`: each output is the sum of its `shape[dim]` inputs "
        "divided by `shape[dim]`, and the output keeps the input's rank with `shape[dim]` = 1 (PyTorch's "
        "`keepdim=True`). The sizes come in `shape`, a device array of `ndim` `size_t` values."
    )
    parameters = dim_signature("size_t", None, "the input's shape with `shape[dim]` = 1")
    keepdim = True
    flops_formula = "numel (R − 1 adds and one divide per output)"

    def flops(self, dims: Dims) -> int:
        return math.prod(dims[1:])

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().mean(dim=dim)
