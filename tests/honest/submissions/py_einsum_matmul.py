# Honest: matmul through einsum, copied into the output.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    output_c.copy_(torch.einsum("ik,kj->ij", input_a, input_b))
