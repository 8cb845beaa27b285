# Broken: uses the tanh approximation of GELU where the exact (erf) form is asked for.
import torch


def solution(
    input_a: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, output: torch.Tensor, m: int, n: int, k: int
) -> None:
    output.copy_(torch.nn.functional.gelu(torch.addmm(bias, input_a, weight.T), approximate="tanh"))
