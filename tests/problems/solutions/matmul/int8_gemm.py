import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    # Every partial sum is an integer below 2^53, so a float64 product is exact (torch has no int8 GEMM for
    # ragged shapes on the GPU).
    output_c.copy_(torch.matmul(input_a.double(), input_b.double().T))
