import torch


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    torch.add(d_input1, d_input2, out=d_output)
