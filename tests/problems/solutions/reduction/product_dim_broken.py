# Broken: multiplies magnitudes, losing the sign of every product with an odd number of negative factors.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    output.copy_(torch.prod(input.abs(), dim=dim, keepdim=True))
