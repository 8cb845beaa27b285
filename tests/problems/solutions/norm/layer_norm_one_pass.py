# ruff: noqa: N803  (Tensara's parameter names)
"""Layer norm as Tensara competitors often wrote it: one pass over each sample for the sum and the sum of squares in
float32, the variance as E[x²] − E[x]², and a host loop over the batch."""

import torch


def solution(
    X: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, Y: torch.Tensor, B: int, F: int, D1: int, D2: int
) -> None:
    n = F * D1 * D2
    for b in range(B):
        row = X[b].reshape(n)
        mean = row.sum() / n
        var = (row * row).sum() / n - mean * mean
        Y[b].copy_(((row - mean) * torch.rsqrt(var + 1e-5)).reshape(F, D1, D2) * gamma + beta)
