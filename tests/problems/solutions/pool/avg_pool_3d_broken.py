# Broken: reads the volume as H×D×W (the two fast axes swapped), which only cubic volumes survive.
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
    D: int,
) -> None:
    pooled = F.avg_pool3d(input.reshape(1, 1, H, D, W), kernel_size, stride, padding)
    output.copy_(pooled.reshape(output.shape))
