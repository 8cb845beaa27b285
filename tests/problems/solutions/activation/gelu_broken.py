# Broken: uses the exact erf form of GELU, up to about 5e-4 off the tanh approximation the problem asks for.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(F.gelu(input.float()))
