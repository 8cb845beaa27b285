import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int) -> None:
    output.copy_(torch.cumsum(input, dim=0, dtype=torch.int32))
