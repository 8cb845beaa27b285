"""argmin: the index of the smallest value along one dimension, as int32."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class Argmin(DimReduction):
    slug = "argmin"
    # Version 1 passed `shape` in device memory; Tensara's solutions read it on the host.
    version = 2
    title = "Argmin Over Dimension"
    description = (
        "For every position of the other dimensions, write the index along `dim` of the smallest input value "
        "as an `int`; the output has the input's shape without `dim`. The input's sizes come in `shape`, an "
        "array of `ndim` ints in host memory (read it in `solution`'s host code, not in a kernel); `dim` may be any "
        "dimension, so the reduced elements are `prod(shape[dim+1:])` apart. Values never tie along `dim`. "
        "Indices are checked exactly."
    )
    parameters = dim_signature("int", "int32", shape_memory="host")
    distinct = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one compare per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        import torch

        return x.argmin(dim=dim).to(torch.int32)
