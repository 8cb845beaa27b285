# Class: weak_output
# §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
# Attack: writes everything except one element in every 4093 (a prime, so no power-of-two sampling stride ever
# lands on a hole), and leaves the holes alone. Small cases have no hole at all and pass; a check of a few
# sampled elements would pass them all. Every element is verified: a wrong answer on the first case with holes.
import torch

PERIOD = 4093


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    holes = torch.arange(PERIOD - 1, max(n, PERIOD - 1), PERIOD, device=output_c.device)
    saved = output_c[holes].clone()
    torch.add(input_a, input_b, out=output_c)
    output_c[holes] = saved
