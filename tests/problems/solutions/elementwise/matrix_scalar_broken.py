# Broken: takes n for the element count, so only the first n of the n·n elements are scaled.
import torch


def solution(input_matrix: torch.Tensor, scalar: float, output_matrix: torch.Tensor, n: int) -> None:
    output_matrix.view(-1)[:n] = input_matrix.view(-1)[:n] * scalar
