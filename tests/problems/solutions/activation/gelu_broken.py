# Broken: uses the tanh approximation of GELU, up to about 5e-4 off the exact erf form.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    output.copy_(F.gelu(input.float(), approximate="tanh"))
