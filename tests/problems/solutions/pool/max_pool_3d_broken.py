# Broken: an off-by-one in the window loop along D: the last element of each window's rows is never seen.
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
    x = F.pad(input.view(1, 1, H, W, D), (padding,) * 6, value=float("-inf"))
    # Windows of kernel_size × kernel_size × (kernel_size − 1): the D loop stops one short.
    windows = (
        x.unfold(2, dilation * (kernel_size - 1) + 1, stride)
        .unfold(3, dilation * (kernel_size - 1) + 1, stride)
        .unfold(4, dilation * (kernel_size - 1) + 1, stride)
    )
    windows = windows[..., ::dilation, ::dilation, : dilation * (kernel_size - 1) : dilation]
    output.copy_(windows.amax(dim=(-3, -2, -1))[0, 0])
