# Broken: works in whole blocks of 32 rows, so the last n % 32 rows of C are never written.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    full = n - n % 32
    if full:
        torch.matmul(input_a[:full], input_b, out=output_c[:full])
