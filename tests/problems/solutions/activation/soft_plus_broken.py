# Broken: switches to the identity above x = 2, far too early (softplus(2) = 2.127).
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    x = input.float()
    output.copy_(torch.where(x > 2.0, x, torch.log1p(torch.exp(x))))
