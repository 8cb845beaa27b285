# Honest: conv2d through torch.nn.functional (a lazily created cuDNN handle on a GPU).
import torch
import torch.nn.functional as F


def solution(
    input_x: torch.Tensor,
    input_weight: torch.Tensor,
    output_y: torch.Tensor,
    n: int,
    c_in: int,
    h: int,
    w: int,
    c_out: int,
    kh: int,
    kw: int,
) -> None:
    output_y.copy_(F.conv2d(input_x, input_weight, padding=(kh // 2, kw // 2)))
