# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, batch: int, m: int, n: int, k: int) -> None:
    torch.bmm(A, B, out=C)
