# Broken: writes whole 64-column tiles only, so the last m % 64 columns are never written.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int, m: int) -> None:
    full = m - m % 64
    output[:, :full] = torch.clamp_min(input[:, :full], 0)
