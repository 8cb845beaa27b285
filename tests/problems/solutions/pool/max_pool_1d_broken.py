# Broken: pads with zeros instead of −∞, so a window of negative values next to the padding returns 0.
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
) -> None:
    padded = F.pad(input.view(1, 1, H), (padding, padding))
    output.copy_(F.max_pool1d(padded, kernel_size, stride, 0, dilation=dilation).view(-1))
