"""sigmoid: 1 / (1 + e⁻ˣ) over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Sigmoid(Activation):
    slug = "sigmoid"
    title = "Sigmoid"
    description = (
        "Apply the logistic sigmoid to every element of a row-major n×m matrix: `output = 1 / (1 + exp(-input))`."
    )
    flops_formula = "n · m (one sigmoid per element)"
    input_scale = 4.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return x.sigmoid()
