# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, B: int, D: int) -> None:
    Y.copy_(X / (X.abs().sum(dim=1, keepdim=True) + 1e-10))
