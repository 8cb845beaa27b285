# Broken: writes the cosine similarity itself instead of the loss 1 - similarity.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(predictions: torch.Tensor, targets: torch.Tensor, output: torch.Tensor, n: int, d: int) -> None:
    output.copy_(F.cosine_similarity(predictions, targets, dim=1, eps=1e-8))
