# Honest: ReLU as clamp_min.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    torch.clamp_min(input, 0.0, out=output)
