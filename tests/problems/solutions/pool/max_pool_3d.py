# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    input: torch.Tensor,
    kernel_size: int,
    stride: int,
    padding: int,
    dilation: int,
    output: torch.Tensor,
    H: int,
    W: int,
    D: int,
) -> None:
    pooled = F.max_pool3d(input.view(1, 1, H, W, D), kernel_size, stride, padding, dilation=dilation)
    output.copy_(pooled[0, 0])
