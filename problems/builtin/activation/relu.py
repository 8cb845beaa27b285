"""relu: max(x, 0) over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class Relu(Activation):
    slug = "relu"
    title = "ReLU"
    description = "Apply the rectified linear unit to every element of an n×m matrix: `output = max(input, 0)`."
    # Version 1 took one flat length `n`; the two sizes of version 2 are Tensara's signature.
    version = 2
    flops_formula = "n · m (one max per element)"

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp_min(0.0)
