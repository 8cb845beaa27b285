"""gelu: x · Φ(x), the exact (erf) form, over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Gelu(Activation):
    slug = "gelu"
    title = "GELU"
    description = (
        "Apply the Gaussian error linear unit to every element of a row-major n×m matrix, in its exact form: "
        "`output = 0.5 * input * (1 + erf(input / sqrt(2)))`. The tanh approximation differs by up to about "
        "5e-4 and fails the float32 check."
    )
    flops_per_element = 24
    flops_formula = "24 · n · m (Tensara's count for one erf-based GELU per element)"
    input_scale = 3.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        import math

        return 0.5 * x * (1.0 + (x / math.sqrt(2.0)).erf())
