# Broken: exponentiates the raw logits without subtracting the row maximum, so large logits overflow to inf.
# ruff: noqa: N803  (upper-case size names, as in Tensara's problems)
import torch


def solution(logits: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor, B: int, V: int) -> None:
    x = logits.float()
    picked = x.gather(1, targets.long()[:, None])[:, 0]
    loss.copy_(x.exp().sum(dim=1).log() - picked)
