# Broken: takes the statistics per (sample, feature) over the spatial positions only (instance norm).
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(X: torch.Tensor, Y: torch.Tensor, B: int, F: int, D1: int, D2: int) -> None:
    mean = X.mean(dim=(2, 3), keepdim=True)
    var = X.var(dim=(2, 3), keepdim=True, unbiased=False)
    Y.copy_((X - mean) / torch.sqrt(var + 1e-5))
