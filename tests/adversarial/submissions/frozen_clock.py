# Class: impossible_time
# §6: impossible times: zero, negative, NaN, below the physical floor, collapsing an aggregate
# Attack: freezes time.perf_counter_ns (and time.perf_counter) at import, so a harness reading them at call
# time measures exactly zero for every call: an infinite rate that would collapse any mean. The computation is
# honest. Either the harness's clock is out of reach (true cost) or a zero sample is rejected.
import time

import torch

_frozen_ns = time.perf_counter_ns()
time.perf_counter_ns = lambda: _frozen_ns
time.perf_counter = lambda: _frozen_ns / 1e9


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
