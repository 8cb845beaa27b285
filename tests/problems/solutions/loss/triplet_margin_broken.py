# Broken: compares squared distances, leaving out the square roots.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    loss: torch.Tensor,
    B: int,
    E: int,
    margin: float,
) -> None:
    d_pos = (anchor - positive).square().sum(dim=1)
    d_neg = (anchor - negative).square().sum(dim=1)
    loss.copy_((d_pos - d_neg + margin).clamp_min(0.0).mean().reshape(1))
