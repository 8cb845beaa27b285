# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    alpha: float,
    output: torch.Tensor,
    M: int,
    N: int,
    K: int,
) -> None:
    torch.matmul(A, B, out=output)
    output.mul_(C)
    torch.nn.functional.leaky_relu_(output, alpha)
