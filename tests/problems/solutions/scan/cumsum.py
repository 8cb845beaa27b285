import torch


def solution(input: torch.Tensor, output: torch.Tensor, N: int) -> None:  # noqa: N803
    output.copy_(torch.cumsum(input, dim=0))
