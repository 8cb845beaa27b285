# Broken: leaves out the 1/sqrt(E) scale, so the softmax is far too sharp.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, output: torch.Tensor, B: int, H: int, S: int, E: int
) -> None:
    scores = Q.float() @ K.float().transpose(-1, -2)
    output.copy_(scores.softmax(dim=-1) @ V.float())
