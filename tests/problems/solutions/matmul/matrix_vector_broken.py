# Broken: each dot product stops at the last multiple of 32 columns, dropping the K tail.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, k: int) -> None:
    full = k - k % 32
    torch.mv(input_a[:, :full], input_b[:full], out=output_c)
