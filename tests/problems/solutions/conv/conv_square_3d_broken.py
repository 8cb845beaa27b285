# Broken: computes only the 'valid' interior and leaves the border voxels at zero instead of padding.
# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, size: int, K: int) -> None:
    s, r = size, K // 2
    C.zero_()
    C[r : s - r, r : s - r, r : s - r] = F.conv3d(A.view(1, 1, s, s, s), B.view(1, 1, K, K, K))[0, 0]
