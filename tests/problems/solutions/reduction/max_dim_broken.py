# Broken: counts `dim` from the last dimension (shape[ndim - 1 - dim]), so it reduces the wrong axis.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    result = torch.amax(input, dim=ndim - 1 - dim).reshape(-1)
    output.reshape(-1).copy_(result[: output.numel()])
