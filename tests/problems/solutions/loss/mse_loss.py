import math

import torch


def solution(
    predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, shape: torch.Tensor, ndim: int
) -> None:
    numel = math.prod(shape.tolist())  # host memory: a CPU tensor, read without waiting for the device
    output.copy_(((predictions - targets) ** 2).sum() / numel)
