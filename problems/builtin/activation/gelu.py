"""gelu: the tanh approximation of x · Φ(x), Tensara's reference, over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Gelu(Activation):
    slug = "gelu"
    # Version 1 took the exact (erf) form; Tensara's reference, and its competitors' kernels, use the tanh form.
    version = 2
    title = "GELU"
    description = (
        "Apply the Gaussian error linear unit to every element of a row-major n×m matrix, in its tanh "
        "approximation (PyTorch's `gelu(x, approximate='tanh')`): "
        "`output = 0.5 * input * (1 + tanh(sqrt(2/pi) * (input + 0.044715 * input³)))`. The exact erf form "
        "differs by up to about 5e-4 and fails the float32 check."
    )
    flops_per_element = 24
    flops_formula = "24 · n · m (Tensara's count for one tanh-approximated GELU per element)"
    input_scale = 3.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        import math

        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + inner.tanh())
