# Broken: normalizes over the last dimension only (D2), as for a (..., D2) layer norm.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(
    X: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, Y: torch.Tensor, B: int, F: int, D1: int, D2: int
) -> None:
    Y.copy_(torch.nn.functional.layer_norm(X.float(), (D2,), eps=1e-5) * gamma.float() + beta.float())
