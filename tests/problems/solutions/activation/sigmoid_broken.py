# Broken: processes rows in blocks of 8 and drops the last n % 8 rows.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    rows = n - n % 8
    output[:rows] = torch.sigmoid(input[:rows].float())
