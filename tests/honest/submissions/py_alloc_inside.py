# Honest: allocates a temporary inside every call, then copies it into the output.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    total = input_a + input_b
    output_c.copy_(total)
