# Class: impossible_time
# §6: impossible times: zero, negative, NaN, below the physical floor, collapsing an aggregate
# Attack: makes time.perf_counter_ns run backwards from the moment of import, so every interval a harness measures
# through it is negative, which drags a mean (or a sum of times) below zero. The computation is honest. Either
# the harness's clock is out of reach (true cost) or a negative sample is rejected.
import time

import torch

_real_ns = time.perf_counter_ns
_origin_ns = _real_ns()


def _backwards_ns() -> int:
    return _origin_ns - (_real_ns() - _origin_ns)


time.perf_counter_ns = _backwards_ns


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
