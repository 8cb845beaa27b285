"""argmax: the index of the largest value along one dimension, as int32."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class Argmax(DimReduction):
    slug = "argmax"
    # Version 1 passed `shape` in device memory; Tensara's solutions read it on the host.
    version = 2
    title = "Argmax Over Dimension"
    description = (
        "For every position of the other dimensions, write the index along `dim` of the largest input value "
        "as an `int`; the output has the input's shape without `dim`. Values never tie along `dim`. The input's "
        "sizes come in `shape`, an array of `ndim` ints in host memory (read it in `solution`'s host code, not in a "
        "kernel). Indices are checked exactly."
    )
    parameters = dim_signature("int", "int32", shape_memory="host")
    distinct = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one compare per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        import torch

        return x.argmax(dim=dim).to(torch.int32)
