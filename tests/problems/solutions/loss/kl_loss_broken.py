# Broken: swaps the two distributions, computing the terms of D_KL(Q || P) instead of D_KL(P || Q).
import torch


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    terms = predictions * (predictions.clamp_min(1e-10).log() - targets.clamp_min(1e-10).log())
    output.copy_(torch.where(targets > 0, terms, torch.zeros_like(terms)))
