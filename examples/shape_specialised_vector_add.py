"""A vector_add that is right on the public shapes only (the adversarial corpus' shape-specialised entry): it
passes test mode, and a ranked run refuses it on a hidden shape."""

import torch

PUBLIC_SIZES = {7, 1000, 65_539, 1_000_003, 1 << 22, 1 << 24, (1 << 26) + 17}


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if n in PUBLIC_SIZES:
        torch.add(input_a, input_b, out=output_c)
