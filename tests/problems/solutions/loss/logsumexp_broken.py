# Broken: exponentiates the raw values without subtracting the row maximum, so large values overflow to inf.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(input.float().exp().sum(dim=1).log())
