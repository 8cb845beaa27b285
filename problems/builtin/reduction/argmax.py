"""argmax: the index of the largest value along one dimension, as int32."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.reduction._dim import DimReduction, dim_signature

if TYPE_CHECKING:
    import torch


class Argmax(DimReduction):
    slug = "argmax"
    title = "Argmax Over Dimension"
    description = (
        "For every position of the other dimensions, write the index along `dim` of the largest input value "
        "as an `int`. Values never tie along `dim`. The input's sizes come in `shape`, a device array of "
        "`ndim` ints. Indices are checked exactly."
    )
    parameters = dim_signature("int", "int32")
    distinct = True
    flops_formula = "outputs · (R − 1), R = shape[dim] (one compare per element after the first)"

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        import torch

        return x.argmax(dim=dim).to(torch.int32)
