"""huber-loss: the smooth L1 loss (Huber with delta 1) of every element."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.loss._loss import ElementwiseLoss

if TYPE_CHECKING:
    import torch


class HuberLoss(ElementwiseLoss):
    slug = "huber-loss"
    title = "Huber Loss"
    description = (
        "For two length-n vectors, write the smooth L1 loss (Huber loss with delta = 1) of every element: with "
        "`d = predictions[i] - targets[i]`, `output[i] = 0.5 * d * d` where `|d| < 1`, else `|d| - 0.5`. "
        "No averaging: the output has n values."
    )
    flops_formula = "5 · n (subtract, absolute value, compare, and square-and-halve or subtract per element)"
    flops_per_element = 5

    def loss(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        d = predictions - targets
        return (0.5 * d * d).where(d.abs() < 1.0, d.abs() - 0.5)
