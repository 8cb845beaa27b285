# Broken: treats the reduced elements as adjacent (stride 1), which holds only when dim is the last dimension.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    r = input.shape[dim]
    output.copy_(input.reshape(-1, r).sum(dim=1).reshape(output.shape))
