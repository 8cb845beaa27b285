# Broken: sorts the raw bits as unsigned, so every negative value lands after the positives.
import torch


def solution(a: torch.Tensor, b: torch.Tensor, n: int) -> None:
    unsigned = a.to(torch.int64) & 0xFFFFFFFF
    b.copy_(torch.sort(unsigned).values.to(torch.int32))
