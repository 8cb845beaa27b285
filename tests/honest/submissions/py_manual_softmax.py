# Honest: softmax written out as a chain of in-place tensor operations.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, rows: int, cols: int) -> None:
    peak = input_x.amax(dim=1, keepdim=True)
    torch.sub(input_x, peak, out=output_y)
    output_y.exp_()
    output_y.div_(output_y.sum(dim=1, keepdim=True))
