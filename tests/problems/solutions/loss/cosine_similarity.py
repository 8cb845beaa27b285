import torch
import torch.nn.functional as F  # noqa: N812


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int, d: int) -> None:
    output.copy_(1.0 - F.cosine_similarity(predictions, targets, dim=1, eps=1e-8))
