# Broken: assumes the product of symmetric matrices is symmetric and mirrors the upper triangle.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    upper = torch.matmul(input_a, input_b).triu()
    output_c.copy_(upper + upper.triu(1).T)
