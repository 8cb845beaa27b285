# Broken: drops the K tail past the last multiple of 64 (the kernel bug the ragged cases exist to catch).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    full = k - k % 64 if k >= 64 else k - 1
    torch.matmul(input_a[:, :full], input_b[:full, :], out=output_c)
