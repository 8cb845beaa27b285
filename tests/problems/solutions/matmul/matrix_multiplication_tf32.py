"""A TF32 product, as a Tensara competitor wrote it for tensor cores: each operand keeps 10 bits of mantissa and the
products are summed in float32. Tensara's GEMM check (rtol 3e-3) accepted it; so must ours."""

import torch


def _tf32(x: torch.Tensor) -> torch.Tensor:
    # Round to nearest on the 13 mantissa bits that TF32 drops (the sign and exponent stay).
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    torch.matmul(_tf32(input_a), _tf32(input_b), out=output_c)
