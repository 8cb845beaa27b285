"""swish: x · sigmoid(x) (SiLU) over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Swish(Activation):
    slug = "swish"
    title = "Swish"
    description = (
        "Apply swish (SiLU, with beta = 1) to every element of a row-major n×m matrix: "
        "`output = input / (1 + exp(-input))`."
    )
    flops_formula = "n · m (Tensara's count: one swish per element)"
    input_scale = 4.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return x * x.sigmoid()
