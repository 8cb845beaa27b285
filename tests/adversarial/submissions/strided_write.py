# Class: weak_output
# §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
# Attack: writes every other element only, hoping a strided or random sample of the output lands on the written
# ones often enough. Every element is verified: a wrong answer.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a[::2], input_b[::2], out=output_c[::2])
