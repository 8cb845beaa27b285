# Honest: calls torch.cuda.synchronize() after its work (GPU only).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
    torch.cuda.synchronize()
