# Honest, host-bound: NumPy works out the chunk bounds before each call's launches (host arithmetic per call).
import numpy as np
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    chunks = int(np.clip(np.ceil(np.log2(max(n, 2))), 1, 24))
    bounds = np.unique(np.linspace(0, n, chunks + 1).round().astype(np.int64))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        torch.add(input_a[lo:hi], input_b[lo:hi], out=output_c[lo:hi])
