# Broken: an off-by-one bound (i < n - 1) leaves the last element unwritten.
import torch


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    torch.add(d_input1[: n - 1], d_input2[: n - 1], out=d_output[: n - 1])
