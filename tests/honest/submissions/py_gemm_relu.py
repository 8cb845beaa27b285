# Honest: matmul into the output, then the bias and ReLU in place (Linear layout: C = relu(A · Wᵀ + b)).
import torch


def solution(A: torch.Tensor, W: torch.Tensor, b: torch.Tensor, C: torch.Tensor, B: int, N: int, M: int) -> None:
    torch.matmul(A, W.t(), out=C)
    C.add_(b)
    C.relu_()
