# Class: harness_patch
# §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
# Attack: at import, time.perf_counter and time.perf_counter_ns are replaced by clocks that run 1000 times slow,
# never zero nor negative, so a harness that looks them up at call time reports plausible but tiny times. The
# computation itself is honest. The harness binds its clocks before importing the submission (the run is timed
# at its true cost), or the calibration spin and the judge's own wall clock disagree with it (integrity).
import time

import torch

_real_ns = time.perf_counter_ns
_origin_ns = _real_ns()


def _slow_ns() -> int:
    return _origin_ns + (_real_ns() - _origin_ns) // 1000


def _slow() -> float:
    return _slow_ns() / 1e9


time.perf_counter_ns = _slow_ns
time.perf_counter = _slow


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
