# Honest: draws random numbers it never uses (the RNG is the solution's to use).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.rand(8, device=output_c.device)
    torch.add(input_a, input_b, out=output_c)
