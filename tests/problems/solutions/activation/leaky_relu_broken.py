# Broken: assumes the usual slope of 0.01 instead of reading alpha.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input: torch.Tensor, alpha: float, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(F.leaky_relu(input, 0.01))
