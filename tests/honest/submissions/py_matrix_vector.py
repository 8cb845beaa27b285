# Honest: matrix-vector product with torch.mv.
import torch


def solution(input_a: torch.Tensor, input_x: torch.Tensor, output_y: torch.Tensor, m: int, n: int) -> None:
    torch.mv(input_a, input_x, out=output_y)
