# Broken: the mask is off by one and lets each query see the next key too.
# ruff: noqa: N803  (Tensara's parameter names)
import math

import torch


def solution(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, output: torch.Tensor, B: int, H: int, S: int, D: int
) -> None:
    scores = Q.float() @ K.float().transpose(-1, -2) / math.sqrt(D)
    future = torch.ones(S, S, dtype=torch.bool, device=Q.device).triu(2)
    output.copy_(scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V.float())
