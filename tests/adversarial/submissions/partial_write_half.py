# Class: weak_output
# §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
# Attack: writes only the first half of the output (half the traffic), hoping a check samples the front of it.
# Every element is verified, and the untouched half keeps its NaN poison: a wrong answer.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    half = (n + 1) // 2
    torch.add(input_a[:half], input_b[:half], out=output_c[:half])
