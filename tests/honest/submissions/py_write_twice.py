# Honest: zeroes the output first, then accumulates into it.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    output_c.zero_()
    output_c.add_(input_a).add_(input_b)
