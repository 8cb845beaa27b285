import torch


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    torch.clamp_min(1.0 - predictions * targets, 0.0, out=output)
