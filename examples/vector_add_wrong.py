"""A wrong vector_add: it forgets the last element, so the unwritten output keeps the harness's poison."""

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a[: n - 1], input_b[: n - 1], out=output_c[: n - 1])
