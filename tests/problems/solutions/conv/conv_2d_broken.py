# Broken: reads the kernel as Kw×Kh (the sizes swapped), which only square kernels survive.
# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, H: int, W: int, Kh: int, Kw: int) -> None:
    kernel = B.reshape(Kw, Kh).t().reshape(1, 1, Kh, Kw)
    C.copy_(F.conv2d(A.view(1, 1, H, W), kernel, padding=(Kh // 2, Kw // 2)).view(H, W))
