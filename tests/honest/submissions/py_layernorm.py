# Honest: layer normalisation through torch.nn.functional.
import torch
import torch.nn.functional as F


def solution(
    input_x: torch.Tensor, input_gamma: torch.Tensor, input_beta: torch.Tensor, output_y: torch.Tensor,
    rows: int, cols: int, eps: float,
) -> None:
    output_y.copy_(F.layer_norm(input_x, (cols,), input_gamma, input_beta, eps))
