# Broken: takes the RMS of X alone instead of the sum X + residual.
# ruff: noqa: N803  (upper-case size names, as in Tensara's problems)
import torch


def solution(
    X: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor,
    Y: torch.Tensor,
    residual_out: torch.Tensor,
    B: int,
    N: int,
) -> None:
    x = X.float()
    r = x + residual.float()
    residual_out.copy_(r)
    Y.copy_(r * torch.rsqrt(x.square().mean(dim=1, keepdim=True) + 1e-6) * weight.float())
