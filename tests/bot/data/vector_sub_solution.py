"""A correct PyTorch solution of the test problem vector_sub."""

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.sub(input_a, input_b, out=output_c)
