import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    output.copy_(torch.prod(input, dim=dim, keepdim=True))
