# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, size: int) -> None:
    Y.copy_(X / torch.linalg.vector_norm(X.reshape(-1)))
