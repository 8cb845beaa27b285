# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    loss: torch.Tensor,
    B: int,
    E: int,
    margin: float,
) -> None:
    loss.copy_(F.triplet_margin_loss(anchor, positive, negative, margin=margin).reshape(1))
