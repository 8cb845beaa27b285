# Honest: raises and catches an exception inside every call.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    try:
        raise ValueError("handled")
    except ValueError:
        pass
    torch.add(input_a, input_b, out=output_c)
