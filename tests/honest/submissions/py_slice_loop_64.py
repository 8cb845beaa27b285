# Honest, host-bound: a Python loop of 64 slice launches per call, as a first attempt at tiling often is.
import torch

SLICES = 64


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    step = max(1, (n + SLICES - 1) // SLICES)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        torch.add(input_a[lo:hi], input_b[lo:hi], out=output_c[lo:hi])
