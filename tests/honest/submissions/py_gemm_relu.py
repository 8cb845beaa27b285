# Honest: matmul into the output, then ReLU in place.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, k: int, n: int) -> None:
    torch.matmul(input_a, input_b, out=output_c)
    output_c.relu_()
