# Honest: an inclusive scan with torch.cumsum.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, n: int) -> None:
    torch.cumsum(input_x, dim=0, out=output_y)
