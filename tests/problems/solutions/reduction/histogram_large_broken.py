# Broken: drops the last n % 1024 values, as a kernel that launches n / 1024 full blocks does.
import torch


def solution(input: torch.Tensor, counts: torch.Tensor, n: int, num_bins: int) -> None:
    kept = input[: n - n % 1024].long()
    counts.copy_(torch.bincount(kept, minlength=num_bins).to(torch.int32))
