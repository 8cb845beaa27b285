# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, N: int, K: int) -> None:
    C.copy_(F.conv1d(A.view(1, 1, N), B.view(1, 1, K), padding=K // 2).view(N))
