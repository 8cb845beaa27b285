# Broken: takes the k largest of each row in ascending order instead of descending.
import torch


def solution(input: torch.Tensor, values: torch.Tensor, indices: torch.Tensor, n: int, m: int, k: int) -> None:
    top = torch.topk(input, k, dim=1, largest=True, sorted=True)
    values.copy_(top.values.flip(1))
    indices.copy_(top.indices.flip(1).to(torch.int32))
