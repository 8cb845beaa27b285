# Broken: always reduces the last dimension, whatever `dim` says.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    result = torch.argmin(input, dim=-1).to(torch.int32)
    output.reshape(-1)[: result.numel()].copy_(result.reshape(-1)[: output.numel()])
