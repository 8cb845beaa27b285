"""soft-plus: log(1 + eˣ) over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class SoftPlus(Activation):
    slug = "soft-plus"
    title = "Softplus"
    description = (
        "Apply softplus to every element of a row-major n×m matrix: `output = log(1 + exp(input))`. Inputs reach "
        "well past ±10: compute it so that neither large nor very negative inputs lose accuracy."
    )
    flops_per_element = 3
    flops_formula = "3 · n · m (an exponential, an add and a logarithm per element)"
    input_scale = 5.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        import torch

        return torch.logaddexp(x, torch.zeros_like(x))
