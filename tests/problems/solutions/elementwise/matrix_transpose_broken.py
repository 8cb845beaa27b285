# Broken: reinterprets the input as cols×rows instead of transposing it (a reshape, not a transpose).
import torch


def solution(input_a: torch.Tensor, output_b: torch.Tensor, rows: int, cols: int) -> None:
    output_b.copy_(input_a.reshape(cols, rows))
