"""The measurement loop for one test case, shaped like nvbench's: calibrate, warm up, run trials, summarise."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contract.wire import CaseTiming, MeasureConfig
from runner.errors import ImplausibleTimeError
from runner.timing.criteria import CoefficientOfVariation, MedianRelativeError, StoppingCriterion
from runner.timing.methods import method_named

BoundCall = Callable[[], object]
# A timer runs one call and returns its runtime in seconds, or None when the sample must be discarded. What a
# "call" is belongs to the timer: a bound function in process, an input-set index for the judge's timer.
SampleTimer = Callable[[Any], float | None]


def make_criterion(config: MeasureConfig) -> StoppingCriterion:
    """The stopping criterion the configured method names, with its parameters from `config`."""
    return method_named(config.method).make_criterion(config)


@dataclass
class Measurement:
    """Times a case until its stopping criterion holds or a cap is reached.

    `calls` holds one bound call per input set; sample i uses set i mod len(calls), so addresses and values
    change between samples. `run()` reads as its phases.
    """

    calls: Sequence[Any]
    timer: SampleTimer
    config: MeasureConfig
    flops: int
    bytes: int
    runtimes: list[float] = field(default_factory=list)
    dropped: int = 0
    timed_out: bool = False

    def run(self, index: int, name: str, dims: list[int]) -> CaseTiming:
        self.run_warmup()
        criterion = self.run_trials()
        return self.summarise(criterion, index, name, dims)

    def run_warmup(self) -> None:
        calibrate = getattr(self.timer, "calibrate", None)
        if calibrate is not None:
            calibrate(self.calls[0])
        for call in self.calls:
            self.timer(call)
        start_trials = getattr(self.timer, "start_trials", None)
        if start_trials is not None:
            start_trials()

    def run_trials(self) -> StoppingCriterion:
        criterion = make_criterion(self.config)
        deadline = time.monotonic() + self.config.max_seconds
        attempts = 0
        # Dropped samples count against a cap too, so a timer that keeps dropping cannot loop forever.
        while attempts < 4 * self.config.max_samples:
            runtime = self.timer(self.calls[attempts % len(self.calls)])
            attempts += 1
            if runtime is None:
                self.dropped += 1
            elif not math.isfinite(runtime) or runtime <= 0:
                # Zero, negative or NaN would collapse the median and every mean built on it.
                raise ImplausibleTimeError(f"a sample of this case measured {runtime!r} s, which cannot be real")
            else:
                self.runtimes.append(runtime)
                criterion.add(runtime)
                if criterion.is_finished() or len(self.runtimes) >= self.config.max_samples:
                    break
            if time.monotonic() > deadline:
                self.timed_out = True
                break
        return criterion

    def summarise(self, criterion: StoppingCriterion, index: int, name: str, dims: list[int]) -> CaseTiming:
        if not self.runtimes:
            raise ImplausibleTimeError(
                f"no sample of case {name} could be kept: in all {self.dropped} the timer never showed the GPU "
                "waiting for the host, or the GPU was throttling"
            )
        median = statistics.median(self.runtimes)
        mean = statistics.fmean(self.runtimes)
        per_sample_gflops = [self.flops / t / 1e9 for t in self.runtimes if t > 0]
        cv = CoefficientOfVariation(min_samples=2)
        for t in self.runtimes:
            cv.add(t)
        rse = criterion.rse() if isinstance(criterion, MedianRelativeError) else None
        sensors = getattr(self.timer, "sensors", None)
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
            cv=cv.cv() if len(self.runtimes) > 1 else -1.0,
            converged=criterion.is_finished(),
            rse=rse if rse is not None and rse != float("inf") else None,
            dropped_samples=self.dropped,
            sm_clock_mhz=sensors.sm_clock_mhz() if sensors is not None else None,
            temperature_c=sensors.temperature_c() if sensors is not None else None,
            measured_seconds=sum(self.runtimes),
        )


def measure_case(
    calls: Sequence[Any],
    timer: SampleTimer,
    config: MeasureConfig,
    *,
    flops: int,
    bytes_moved: int,
    index: int,
    name: str,
    dims: list[int],
) -> CaseTiming:
    """Time one test case (see Measurement)."""
    return Measurement(calls, timer, config, flops, bytes_moved).run(index, name, dims)
