# Broken: writes p - y without reducing, so points with y = 0 get p instead of 0.
import torch


def solution(xs: torch.Tensor, ys: torch.Tensor, p: int, out_xy: torch.Tensor, n: int) -> None:
    pairs = out_xy.view(torch.int64).view(n, 2)
    pairs[:, 0] = xs.view(torch.int64)
    pairs[:, 1] = p - ys.view(torch.int64)
