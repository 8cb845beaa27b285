"""The measurement loop for one test case, shaped like nvbench's: warm up, run trials, summarise."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from runner.api import CaseTiming, MeasureConfig
from runner.measure.criteria import CoefficientOfVariation
from runner.measure.timers import CallTimer


@dataclass
class Measurement:
    """Times one bound call until the stopping criterion holds or a cap is reached.

    `run()` reads as its phases: one untimed call, then `do { time one call } while (!finished)`, then the
    summary from raw runtimes.
    """

    call: Callable[[], object]
    timer: CallTimer
    config: MeasureConfig
    flops: int
    bytes: int
    runtimes: list[float] = field(default_factory=list)
    timed_out: bool = False

    def run(self, index: int, name: str, dims: list[int]) -> CaseTiming:
        self.run_warmup()
        self.run_trials()
        return self.summarise(index, name, dims)

    def run_warmup(self) -> None:
        self.timer(self.call)

    def run_trials(self) -> None:
        criterion = CoefficientOfVariation(self.config.target_cv, self.config.min_samples)
        deadline = time.monotonic() + self.config.max_seconds
        while True:
            runtime = self.timer(self.call)
            self.runtimes.append(runtime)
            criterion.add(runtime)
            if criterion.is_finished() or len(self.runtimes) >= self.config.max_samples:
                break
            if time.monotonic() > deadline:
                self.timed_out = True
                break
        self._cv = criterion.cv()
        self._converged = criterion.is_finished()

    def summarise(self, index: int, name: str, dims: list[int]) -> CaseTiming:
        median = statistics.median(self.runtimes)
        mean = statistics.fmean(self.runtimes)
        per_sample_gflops = [self.flops / t / 1e9 for t in self.runtimes if t > 0]
        return CaseTiming(
            index=index,
            name=name,
            dims=dims,
            method=self.config.method,
            runtime_median_us=median * 1e6,
            runtime_mean_us=mean * 1e6,
            gflops=self.flops / median / 1e9 if median > 0 else 0.0,
            gflops_mean=statistics.fmean(per_sample_gflops) if per_sample_gflops else 0.0,
            gbps=self.bytes / median / 1e9 if median > 0 else 0.0,
            flops=self.flops,
            bytes=self.bytes,
            samples=len(self.runtimes),
            cv=self._cv if self._cv != float("inf") else -1.0,
            converged=self._converged,
        )


def measure_case(
    call: Callable[[], object],
    timer: CallTimer,
    config: MeasureConfig,
    *,
    flops: int,
    bytes_moved: int,
    index: int,
    name: str,
    dims: list[int],
) -> CaseTiming:
    """Time `call` for one test case (see Measurement)."""
    return Measurement(call, timer, config, flops, bytes_moved).run(index, name, dims)
