import torch
import torch.nn.functional as F  # noqa: N812


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(F.gelu(input.float(), approximate="tanh"))
