# Broken: skips the last element of every slice (a loop bound of R - 1).
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    output.copy_(torch.amin(input.narrow(dim, 0, input.shape[dim] - 1), dim=dim, keepdim=True))
