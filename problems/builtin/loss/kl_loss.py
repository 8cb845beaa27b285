"""kl-loss: the elementwise terms targets · (log targets - log predictions) of a KL divergence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.builtin.loss._loss import ElementwiseLoss
from problems.library import Dims

if TYPE_CHECKING:
    import torch

    from problems.base import DType


class KlLoss(ElementwiseLoss):
    slug = "kl-loss"
    title = "Kullback-Leibler Divergence"
    description = (
        "`predictions` (Q) and `targets` (P) are probability distributions over n outcomes: every prediction is "
        "positive, every target is non-negative, and each vector sums to one. Write each outcome's term of "
        "D_KL(P || Q) before the sum: `output[i] = targets[i] * (log(targets[i]) - log(predictions[i]))`, and "
        "exactly 0 where `targets[i] == 0` (the limit of t·log t). About a tenth of the targets are zero. Every "
        "nonzero value is above 1e-9, so clamping the logarithms' arguments at 1e-10 changes nothing."
    )
    difficulty = "medium"
    flops_formula = "7 · n (two logarithms, subtract, multiply, the zero test and the guards per element)"
    flops_per_element = 7

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        from problems.inputs import torch_dtype, uniform

        # Values within a factor of 20 of each other, so each is at least 1e-9 even at n = 2^26.
        predictions = uniform(dims, "float32", gen, 0.05, 1.0).double()
        targets = uniform(dims, "float32", gen, 0.05, 1.0).double()
        targets *= torch.rand(dims, generator=gen, device=gen.device) >= 0.1
        return tuple((t / t.sum()).to(torch_dtype(dtype)) for t in (predictions, targets))

    def loss(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        safe = targets.where(targets > 0, 1.0)
        return (targets * (safe.log() - predictions.log())).where(targets > 0, 0.0)
