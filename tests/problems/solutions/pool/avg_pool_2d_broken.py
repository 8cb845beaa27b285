# Broken: starts each window at o·stride, forgetting to shift it back by the padding.
# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    input: torch.Tensor,
    kernel_size: int,
    stride: int,
    padding: int,
    output: torch.Tensor,
    H: int,
    W: int,
) -> None:
    # Padding only at the far ends, so every window sits `padding` positions too far along.
    padded = F.pad(input.view(1, 1, H, W), (0, 2 * padding, 0, 2 * padding))
    output.copy_(F.avg_pool2d(padded, kernel_size, stride)[0, 0])
