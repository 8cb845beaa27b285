# Broken: applies the scale only to the negative branch, leaving positive inputs unscaled.
import torch

ALPHA = 1.6732632423543772
SCALE = 1.0507009873554805


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    x = input.float()
    output.copy_(torch.where(x > 0, x, SCALE * ALPHA * torch.expm1(x)))
