import torch


def solution(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None:  # noqa: N803
    output.copy_(torch.log_softmax(input.float(), dim=1))
