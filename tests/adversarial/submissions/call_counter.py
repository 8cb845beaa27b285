# Class: check_vs_timed
# §6: behaving differently when checked than when timed: call counters, pointer reuse, shape detection
# Attack: counts its calls. The first three (one per CPU test case: the correctness check) compute A + B; every
# later call (the timed ones) returns without doing anything. Every timed output is verified, so this is a
# wrong answer.
import torch

CHECKED_CALLS = 3
_calls = 0


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    global _calls
    _calls += 1
    if _calls <= CHECKED_CALLS:
        torch.add(input_a, input_b, out=output_c)
