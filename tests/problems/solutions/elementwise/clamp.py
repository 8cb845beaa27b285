import torch


def solution(input: torch.Tensor, lo: float, hi: float, output: torch.Tensor, n: int, m: int) -> None:
    torch.clamp(input, lo, hi, out=output)
