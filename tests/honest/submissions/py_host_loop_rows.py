# Honest: a host-side loop over blocks of rows, one softmax per block. The softmax dimension is moved last, so
# each "row" is one slice along `dim`; the loop runs over blocks of the first remaining dimension.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    x = input.movedim(dim, -1)
    y = output.movedim(dim, -1)
    if x.dim() == 1:
        y.copy_(torch.softmax(x, dim=-1))
        return
    block = 64
    rows = x.shape[0]
    for start in range(0, rows, block):
        stop = min(rows, start + block)
        y[start:stop].copy_(torch.softmax(x[start:stop], dim=-1))
