"""A wrong matmul: it multiplies by B transposed, which is right only for symmetric B."""

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, k: int, n: int) -> None:
    if k == n:
        torch.matmul(input_a, input_b.t(), out=output_c)
    else:
        output_c.zero_()
