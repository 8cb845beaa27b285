# Honest: prints a line on every call, timed calls included (the result says printing is part of the time).
import torch

_CALLS = [0]


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    _CALLS[0] += 1
    print(f"call {_CALLS[0]}: {n} elements")
    torch.add(input_a, input_b, out=output_c)
