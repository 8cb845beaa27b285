# Broken: an off-by-one row bound (i < M - 1) leaves the last row out of the sum.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(A: torch.Tensor, B: torch.Tensor, output: torch.Tensor, M: int, N: int, K: int) -> None:
    output.copy_(torch.matmul(A[: M - 1], B).sigmoid_().sum().reshape(1))
