"""hinge-loss: max(0, 1 - prediction · target) per element, with targets of -1 or +1."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.loss._loss import ElementwiseLoss
from problems.library import Dims

if TYPE_CHECKING:
    import torch

    from problems.base import DType


class HingeLoss(ElementwiseLoss):
    slug = "hinge-loss"
    title = "Hinge Loss"
    description = (
        "For two length-n vectors, real-valued `predictions` and `targets` that are each exactly -1.0 or +1.0, "
        "write the hinge loss of every element: `output[i] = max(0, 1 - predictions[i] * targets[i])`. "
        "No averaging: the output has n values."
    )
    flops_formula = "3 · n (multiply, subtract and max per element)"
    flops_per_element = 3

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        from problems.inputs import randn, torch_dtype

        # Predictions spread over [-3, 3] or so: about a third of the elements clear the margin (loss 0).
        signs = torch.randint(0, 2, dims, generator=gen, device=gen.device).mul_(2).sub_(1)
        return randn(dims, dtype, gen, 1.5), signs.to(torch_dtype(dtype))

    def loss(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return (1.0 - predictions * targets).clamp_min(0.0)
