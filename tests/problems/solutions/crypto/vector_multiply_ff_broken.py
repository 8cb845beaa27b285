# Broken: folds the 62-bit product once and never subtracts p, so some results are left in [p, 2^32).
import torch

P = 2147483647


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    product = d_input1.to(torch.int64) * d_input2.to(torch.int64)
    d_output.copy_(((product & P) + (product >> 31)).to(torch.uint32))
