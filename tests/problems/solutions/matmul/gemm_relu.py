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
    torch.addmm(b, A, W.T, out=C)
    C.relu_()
