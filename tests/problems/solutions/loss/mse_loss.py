import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, shape: torch.Tensor, ndim: int
) -> None:
    output.copy_(F.mse_loss(predictions, targets).reshape(1))
