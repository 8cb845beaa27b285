# Honest: a `torch.compile`d function, compiled on the first call.
import torch


@torch.compile(dynamic=True)
def _add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    output_c.copy_(_add(input_a, input_b))
