# Honest: its own parameter names; the arena calls solution positionally.
import torch


def solution(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, size: int) -> None:
    torch.add(x, y, out=out)
