"""selu: scale · (x for x > 0, else alpha · (eᵡ − 1)) with the self-normalizing constants, over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch

# The constants of Klambauer et al. (2017), as PyTorch states them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class Selu(Activation):
    slug = "selu"
    title = "SELU"
    description = (
        "Apply the scaled exponential linear unit to every element of a row-major n×m matrix: "
        "`output = scale * input` where `input > 0`, else `scale * alpha * (exp(input) - 1)`, with "
        "`alpha = 1.6732632423543772` and `scale = 1.0507009873554805`."
    )
    flops_per_element = 3
    flops_formula = "3 · n · m (an exponential, a subtraction and a scale per element)"
    input_scale = 3.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return SELU_SCALE * x.where(x > 0, SELU_ALPHA * x.expm1())
