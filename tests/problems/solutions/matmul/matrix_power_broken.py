# Broken: the loop runs one product short and returns the (n - 1)th power.
import torch


def solution(input_matrix: torch.Tensor, n: int, output_matrix: torch.Tensor, size: int) -> None:
    result = input_matrix.clone()
    for _ in range(n - 2):
        result = result @ input_matrix
    output_matrix.copy_(result)
