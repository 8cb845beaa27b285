# Broken: a sign slip in the sigmoid, 1 / (1 + exp(z)) instead of 1 / (1 + exp(-z)).
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(A: torch.Tensor, B: torch.Tensor, scale: float, output: torch.Tensor, M: int, N: int, K: int) -> None:
    torch.matmul(A, B, out=output)
    output.mul_(torch.sigmoid(-output)).mul_(scale)
