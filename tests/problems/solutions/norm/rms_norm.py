# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, B: int, N: int) -> None:
    x = X.float()
    Y.copy_(x * torch.rsqrt(x.square().mean(dim=1, keepdim=True) + 1e-5))
