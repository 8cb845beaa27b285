import torch


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    terms = targets * (targets.clamp_min(1e-10).log() - predictions.clamp_min(1e-10).log())
    output.copy_(torch.where(targets > 0, terms, torch.zeros_like(terms)))
