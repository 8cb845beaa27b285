import torch
import torch.nn.functional as F  # noqa: N812


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int) -> None:
    output.copy_(F.smooth_l1_loss(predictions, targets, reduction="none", beta=1.0))
