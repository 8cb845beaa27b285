# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(A: torch.Tensor, B: torch.Tensor, output: torch.Tensor, M: int, N: int, K: int) -> None:
    # torch's sum reduces in blocks, so millions of terms keep their digits.
    output.copy_(torch.matmul(A, B).sigmoid_().sum().reshape(1))
