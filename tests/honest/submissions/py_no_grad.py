# Honest: runs inside `torch.no_grad()` (a context manager, not a torch mode left active).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    with torch.no_grad():
        torch.add(input_a, input_b, out=output_c)
