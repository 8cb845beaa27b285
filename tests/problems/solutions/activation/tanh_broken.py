# Broken: handles the matrix in chunks of 4 elements and drops the n·m % 4 elements of the tail.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    count = n * m - (n * m) % 4
    output.view(-1)[:count] = torch.tanh(input.view(-1)[:count].float())
