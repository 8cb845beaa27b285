# Broken: finds an element's row by dividing its flat index by n instead of m (the wrong stride).
import torch


def solution(diagonal_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int, m: int) -> None:
    rows = (torch.arange(n * m, device=input_b.device) // n).clamp_max(n - 1)
    output_c.copy_((input_b.reshape(-1) * diagonal_a[rows]).reshape(n, m))
