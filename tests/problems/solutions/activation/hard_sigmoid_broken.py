# Broken: uses the Keras-style slope of 0.2 (clamp(0.2 x + 0.5, 0, 1)) instead of 1/6.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_((0.2 * input.float() + 0.5).clamp(0.0, 1.0))
