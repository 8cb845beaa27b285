# Broken: skips subtracting the maximum, so exp() overflows to inf on rows with large offsets.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    e = input.float().exp()
    output.copy_(e / e.sum(dim=dim, keepdim=True))
