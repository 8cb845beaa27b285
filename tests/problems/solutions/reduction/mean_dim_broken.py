# Broken: divides by the number of outputs per slice position instead of the reduced size.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    output.copy_(torch.sum(input, dim=dim, keepdim=True) / input.shape[-1])
