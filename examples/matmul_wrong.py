"""A wrong matrix-multiplication: it multiplies by B transposed (reading the K×N buffer B as if it were N×K),
which is right only for a symmetric B."""

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    torch.matmul(input_a, input_b.reshape(n, k).t(), out=output_c)
