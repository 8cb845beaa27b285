# Class: impossible_time
# §6: impossible times: zero, negative, NaN, below the physical floor, collapsing an aggregate
# Attack: makes time.perf_counter_ns return NaN, so every interval a harness measures through it is NaN, which
# poisons any mean, median or comparison built on it (NaN compares false with everything, so "is it under the
# floor?" says no). The computation is honest. Either the harness's clock is out of reach (true cost) or a NaN
# sample is rejected.
import time

import torch

time.perf_counter_ns = lambda: float("nan")


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
