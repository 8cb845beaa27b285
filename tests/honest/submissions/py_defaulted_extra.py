# Honest: one parameter more than the call passes, with a default, and a keyword-only option with a default.
import torch


def solution(
    a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, n: int, alpha: float = 1.0, *, check: bool = False
) -> None:
    torch.add(a, b, alpha=alpha, out=c)
    if check:
        assert c.numel() == n
