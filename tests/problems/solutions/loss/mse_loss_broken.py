# Broken: divides the sum of squares by the first size (shape[0]) instead of by the element count.
import torch


def solution(
    predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, shape: torch.Tensor, ndim: int
) -> None:
    output.copy_(((predictions - targets).square().sum() / shape[0]).reshape(1))
