# Broken: the input-channel loop stops halfway (c_in / 2), dropping the other channels' contributions.
import torch
import torch.nn.functional as F  # noqa: N812


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
    half = max(c_in // 2, 1)
    output_y.copy_(F.conv2d(input_x[:, :half], input_weight[:, :half], padding=(kh // 2, kw // 2)))
