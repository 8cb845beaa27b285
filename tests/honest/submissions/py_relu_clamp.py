# Honest: ReLU as clamp_min.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, n: int) -> None:
    torch.clamp_min(input_x, 0.0, out=output_y)
