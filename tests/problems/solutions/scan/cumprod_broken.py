# Broken: scans each 1024-element block on its own and never carries the previous blocks' product in.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, N: int) -> None:  # noqa: N803
    for start in range(0, N, 1024):
        output[start : start + 1024] = torch.cumprod(input[start : start + 1024], dim=0)
