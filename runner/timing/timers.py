"""Timers that measure one call: CUDA events around it on the GPU, a monotonic clock on the CPU."""

from __future__ import annotations

import time
from collections.abc import Callable


class MonotonicTimer:
    """Wall time of a synchronous CPU call, from `time.perf_counter_ns`."""

    def __call__(self, call: Callable[[], object]) -> float:
        start = time.perf_counter_ns()
        call()
        return (time.perf_counter_ns() - start) / 1e9


class SeedEventTimer:
    """The seed's timer: synchronise, record a start event, call, record a stop event, synchronise.

    Both events go on the current stream, which for CUDA submissions is the legacy default stream.
    """

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._start = torch.cuda.Event(enable_timing=True)
        self._stop = torch.cuda.Event(enable_timing=True)

    def __call__(self, call: Callable[[], object]) -> float:
        cuda = self._torch.cuda
        cuda.synchronize()
        self._start.record()
        call()
        self._stop.record()
        cuda.synchronize()
        return self._start.elapsed_time(self._stop) / 1e3


def seed_warmup() -> None:
    """The seed's GPU warm-up: ten 5000x5000 float32 matmuls, so clocks are up before the first sample."""
    import torch

    a = torch.randn(5000, 5000, device="cuda")
    b = torch.randn(5000, 5000, device="cuda")
    for _ in range(10):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    del a, b
