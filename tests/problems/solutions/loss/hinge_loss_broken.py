# Broken: ignores the targets' signs, as if every target were +1.
import torch


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    torch.clamp_min(1.0 - predictions, 0.0, out=output)
