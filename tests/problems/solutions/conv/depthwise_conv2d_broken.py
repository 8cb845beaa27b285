# Broken: applies channel 0's kernel to every channel (the kernel's channel offset is forgotten).
# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    input: torch.Tensor,
    kernel: torch.Tensor,
    output: torch.Tensor,
    C: int,
    H: int,
    W: int,
    K: int,
) -> None:
    weights = kernel.float()[:1].expand(C, K, K).reshape(C, 1, K, K)
    y = F.conv2d(input.float().view(1, C, H, W), weights, padding=K // 2, groups=C)
    output.copy_(y.view(C, H, W))
