# Broken: ignores the dilation, taking a contiguous window (and so a wrongly sized output when dilation > 1).
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
) -> None:
    pooled = F.max_pool2d(input.view(1, 1, H, W), kernel_size, stride, padding)[0, 0]
    rows, cols = min(pooled.shape[0], output.shape[0]), min(pooled.shape[1], output.shape[1])
    output.zero_()
    output[:rows, :cols] = pooled[:rows, :cols]
