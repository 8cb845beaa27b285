# Honest: softmax along `dim` written out as a chain of in-place tensor operations.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    peak = input.amax(dim=dim, keepdim=True)
    torch.sub(input, peak, out=output)
    output.exp_()
    output.div_(output.sum(dim=dim, keepdim=True))
