# Class: control (honest baseline, no cheat)
# One torch.add writing A + B into the output buffer it is given: the reference cost every vector_add cheat
# is compared with, on the CPU and on the GPU.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
