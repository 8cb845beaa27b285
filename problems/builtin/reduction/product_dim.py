"""product-dim: the product along one dimension; the shape comes as a size_t device array."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from problems.base import DType
from problems.builtin.reduction._dim import DimReduction, dim_signature
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class ProductDim(DimReduction):
    slug = "product-dim"
    # Version 1 dropped the reduced dimension from the output's shape; Tensara keeps it with size 1.
    version = 2
    title = "Product Over Dimension"
    description = (
        "Multiply the elements of an N-d float tensor along dimension `dim`: the output keeps the input's rank "
        "with `shape[dim]` = 1 (PyTorch's `keepdim=True`). The sizes come in `shape`, a device array of `ndim` "
        "`size_t` values. Inputs are `±exp(z)` with random signs and z normal of standard deviation 1/√R "
        "(R = shape[dim]), so every product stays near magnitude 1 and its sign depends on every factor."
    )
    parameters = dim_signature("size_t", None, "the input's shape with `shape[dim]` = 1")
    keepdim = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one multiply per element after the first)"

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        dim, *shape = dims
        # Factors near ±1: a product of R normal draws would overflow or underflow float32.
        z = torch.randn(tuple(shape), generator=gen, device=gen.device).mul_(1.0 / math.sqrt(shape[dim]))
        sign = torch.randint(0, 2, tuple(shape), generator=gen, device=gen.device).mul_(2).sub_(1)
        return (z.exp_().mul_(sign),)

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        return x.double().prod(dim=dim)
