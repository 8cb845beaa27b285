import torch

# Tensara's statement fixes the field: p = 2^61 - 1, so a competitor may build it in rather than read `p`.
P61 = (1 << 61) - 1


def solution(xs: torch.Tensor, ys: torch.Tensor, p: int, out_xy: torch.Tensor, n: int) -> None:
    # Coordinates are below 2^61, so the signed view of each word is the same number.
    x, y = xs.view(torch.int64), ys.view(torch.int64)
    negated = torch.where(y == 0, y, P61 - y)
    pairs = out_xy.view(torch.int64).view(n, 2)
    pairs[:, 0] = x
    pairs[:, 1] = negated
