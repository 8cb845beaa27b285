# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, size: int, K: int) -> None:
    s = size
    C.copy_(F.conv3d(A.view(1, 1, s, s, s), B.view(1, 1, K, K, K), padding=K // 2).view(s, s, s))
