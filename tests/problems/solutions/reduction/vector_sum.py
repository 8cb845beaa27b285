import torch


def solution(input_x: torch.Tensor, output_sum: torch.Tensor, n: int) -> None:
    output_sum.copy_(input_x.float().sum().reshape(1))
