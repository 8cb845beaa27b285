# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, B: int, F: int, D1: int, D2: int) -> None:
    Y.copy_(torch.nn.functional.batch_norm(X, None, None, training=True, eps=1e-5))
