import torch


def solution(input: torch.Tensor, temperature: float, output: torch.Tensor, M: int, N: int) -> None:  # noqa: N803
    output.copy_(torch.softmax(input.float() / temperature, dim=1))
