# Class: weak_output
# §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
# Attack: a float32 matmul computed in bfloat16 (the fast tensor-core path on a GPU), then widened back to
# float32. About three significant digits are lost, far outside float32's tolerance: a wrong answer.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    output_c.copy_(torch.matmul(input_a.bfloat16(), input_b.bfloat16()).float())
