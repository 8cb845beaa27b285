"""hard-sigmoid: clamp(x / 6 + 1/2, 0, 1) over an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.activation._elementwise import Activation

if TYPE_CHECKING:
    import torch


class HardSigmoid(Activation):
    slug = "hard-sigmoid"
    title = "Hard Sigmoid"
    description = (
        "Apply the piecewise-linear sigmoid to every element of a row-major n×m matrix: `output = 0` for "
        "`input <= -3`, `1` for `input >= 3`, and `input / 6 + 0.5` between (PyTorch's `hardsigmoid`, not the "
        "slope-0.2 variant)."
    )
    flops_formula = "n · m (one clamped multiply-add per element)"
    # Most inputs fall in the linear band, a good share in each flat part.
    input_scale = 4.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return (x / 6.0 + 0.5).clamp(0.0, 1.0)
