# Class: harness_patch
# §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
# Attack: at import, torch.cuda.Event.elapsed_time is wrapped to report 30 % of the real time, and
# time.perf_counter(_ns) run 3x slow, so every timing made through those names after the import shrinks. The
# computation is honest. Bound-before-import timing gives the true cost; a harness that is reached anyway is
# caught by the calibration spin (its known duration reads 30 %) or by the physical floor.
import time

import torch

SCALE = 0.3

_real_elapsed = torch.cuda.Event.elapsed_time


def _elapsed(self: torch.cuda.Event, end_event: torch.cuda.Event) -> float:
    return _real_elapsed(self, end_event) * SCALE


torch.cuda.Event.elapsed_time = _elapsed

_real_ns = time.perf_counter_ns
_origin_ns = _real_ns()


def _slow_ns() -> int:
    return _origin_ns + int((_real_ns() - _origin_ns) * SCALE)


time.perf_counter_ns = _slow_ns
time.perf_counter = lambda: _slow_ns() / 1e9


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
