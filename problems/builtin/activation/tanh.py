"""tanh: the hyperbolic tangent over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Tanh(Activation):
    slug = "tanh"
    title = "Tanh"
    description = "Apply the hyperbolic tangent to every element of a row-major n×m matrix: `output = tanh(input)`."
    flops_formula = "n · m (one tanh per element)"
    input_scale = 3.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return x.tanh()
