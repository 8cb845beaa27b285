# Broken: sums only the first n - n % 256 elements (the tail of a 256-wide block loop is dropped).
import torch


def solution(input_x: torch.Tensor, output_sum: torch.Tensor, n: int) -> None:
    output_sum.copy_(input_x[: n - n % 256].float().sum().reshape(1))
