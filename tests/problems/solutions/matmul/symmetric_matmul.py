import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    # B is symmetric, so A · B = A · Bᵀ: both operands are read along their rows.
    torch.matmul(input_a, input_b.T, out=output_c)
