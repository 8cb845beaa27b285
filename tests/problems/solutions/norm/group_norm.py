# ruff: noqa: N803  (upper-case size names, as in Tensara's problems)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    X: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, Y: torch.Tensor, N: int, C: int, HW: int, G: int
) -> None:
    Y.copy_(F.group_norm(X.float(), G, gamma.float(), beta.float(), eps=1e-5))
