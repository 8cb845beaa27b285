# Honest: layer normalisation through torch.nn.functional, over every dimension but the batch (eps = 1e-5).
import torch


def solution(
    X: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, Y: torch.Tensor, B: int, F: int, D1: int, D2: int
) -> None:
    Y.copy_(torch.nn.functional.layer_norm(X, (F, D1, D2), gamma, beta, eps=1e-5))
