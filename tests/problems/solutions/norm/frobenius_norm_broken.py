# Broken: normalizes each row (the last dimension) by its own norm instead of the whole tensor by one norm.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, size: int) -> None:
    Y.copy_(X / torch.linalg.vector_norm(X, dim=-1, keepdim=True))
