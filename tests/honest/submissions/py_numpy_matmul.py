# Honest: matmul through NumPy on views of the CPU tensors (CPU only).
import numpy as np
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    np.matmul(input_a.numpy(), input_b.numpy(), out=output_c.numpy())
