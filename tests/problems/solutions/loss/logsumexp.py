import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(torch.logsumexp(input.float(), dim=1))
