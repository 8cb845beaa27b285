# Honest: a sum reduced on the device, read back with `.item()` and written with fill_.
import torch


def solution(input_x: torch.Tensor, output_sum: torch.Tensor, n: int) -> None:
    output_sum.fill_(input_x.double().sum().item())
