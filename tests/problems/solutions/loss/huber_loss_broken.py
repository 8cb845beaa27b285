# Broken: the linear branch is |d| instead of |d| - 0.5, so the loss jumps at |d| = 1.
import torch


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    d = predictions - targets
    output.copy_(torch.where(d.abs() < 1.0, 0.5 * d * d, d.abs()))
