# Broken: applies the ReLU before adding the bias.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(
    A: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    C: torch.Tensor,
    B: int,
    N: int,
    M: int,
) -> None:
    torch.matmul(A, W.T, out=C)
    C.relu_().add_(b)
