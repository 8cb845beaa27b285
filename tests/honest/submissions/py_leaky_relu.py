# Honest: leaky ReLU through torch.where, using the problem's float parameter (which comes before the output).
import torch


def solution(input: torch.Tensor, alpha: float, output: torch.Tensor, n: int, m: int) -> None:
    torch.where(input > 0, input, input * alpha, out=output)
