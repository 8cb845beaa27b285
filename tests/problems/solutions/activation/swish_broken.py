# Broken: an off-by-one loop bound leaves the last row unwritten.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output[: n - 1] = F.silu(input[: n - 1].float())
