# Honest: leaky ReLU through torch.where, using the problem's float parameter.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, n: int, alpha: float) -> None:
    torch.where(input_x > 0, input_x, input_x * alpha, out=output_y)
