# Broken: clamps only from below, forgetting the upper bound.
import torch


def solution(input: torch.Tensor, lo: float, hi: float, output: torch.Tensor, n: int, m: int) -> None:
    torch.clamp_min(input, lo, out=output)
