# Passes its checked calls, then loops forever in a timed call of the benchmark: the per-batch deadline must stop
# it long before the benchmark phase's own deadline.
import torch

CALLS = [0]


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    CALLS[0] += 1
    if CALLS[0] > 8:
        while True:
            pass
    torch.add(input_a, input_b, out=output_c)
