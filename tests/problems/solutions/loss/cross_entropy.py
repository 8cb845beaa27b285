# ruff: noqa: N803  (upper-case size names, as in Tensara's problems)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(logits: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor, B: int, V: int) -> None:
    loss.copy_(F.cross_entropy(logits.float(), targets.long(), reduction="none"))
