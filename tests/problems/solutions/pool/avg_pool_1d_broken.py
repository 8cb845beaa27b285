# Broken: divides by the number of real elements in the window, so windows over the padding come out too large.
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
) -> None:
    pooled = F.avg_pool1d(input.view(1, 1, H), kernel_size, stride, padding, count_include_pad=False)
    output.copy_(pooled.view(-1))
