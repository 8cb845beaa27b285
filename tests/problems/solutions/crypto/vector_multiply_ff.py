import torch

P = 2147483647


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    product = d_input1.to(torch.int64) * d_input2.to(torch.int64)
    # 2^31 ≡ 1 (mod p): fold the high bits onto the low ones twice, then subtract p once if needed.
    folded = (product & P) + (product >> 31)
    folded = (folded & P) + (folded >> 31)
    d_output.copy_(torch.where(folded >= P, folded - P, folded).to(torch.uint32))
