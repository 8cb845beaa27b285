"""Stopping criteria: small classes with reset/add/is_finished, defaults in the constructor."""

from __future__ import annotations

import bisect
import math
import statistics
from abc import ABC, abstractmethod


class StoppingCriterion(ABC):
    """Decides when a measurement has enough samples. `add` takes one sample's runtime in seconds."""

    name: str

    def __init__(self) -> None:
        self.runtimes: list[float] = []

    def reset(self) -> None:
        self.runtimes = []

    def add(self, runtime_s: float) -> None:
        self.runtimes.append(runtime_s)

    @abstractmethod
    def is_finished(self) -> bool:
        """True once the criterion is satisfied (the caller also enforces sample and time caps)."""


class CoefficientOfVariation(StoppingCriterion):
    """The seed's rule: stop once the CV (stdev / mean) of per-sample GFLOPS is under `target_cv`.

    GFLOPS is flops / runtime, so the CV is taken over 1 / runtime; the flop count cancels out.
    """

    name = "cv"

    def __init__(self, target_cv: float = 0.01, min_samples: int = 5) -> None:
        super().__init__()
        self.target_cv = target_cv
        self.min_samples = max(min_samples, 2)

    def cv(self) -> float:
        rates = [1.0 / t for t in self.runtimes if t > 0]
        if len(rates) < 2:
            return float("inf")
        mean = statistics.fmean(rates)
        return statistics.stdev(rates) / mean if mean > 0 else float("inf")

    def is_finished(self) -> bool:
        return len(self.runtimes) >= self.min_samples and self.cv() < self.target_cv


class MedianRelativeError(StoppingCriterion):
    """Stop once the relative standard error of the median runtime is under `target_rse`.

    Unlike the CV, which measures spread and does not shrink with more samples, the standard error of the
    median shrinks as samples accumulate, so a noisy kernel still converges. The error is read off the
    distribution-free 95 % confidence interval of the median (order statistics n/2 ± 0.98·√n), so a few
    outliers cannot stall or fool it. `min_time_s` requires enough summed runtime before stopping.
    """

    name = "median-rse"
    _Z = 1.96

    def __init__(self, target_rse: float = 0.005, min_samples: int = 10, min_time_s: float = 0.0) -> None:
        super().__init__()
        self.target_rse = target_rse
        self.min_samples = max(min_samples, 10)
        self.min_time_s = min_time_s
        self._sorted: list[float] = []
        self._total = 0.0

    def reset(self) -> None:
        super().reset()
        self._sorted = []
        self._total = 0.0

    def add(self, runtime_s: float) -> None:
        super().add(runtime_s)
        bisect.insort(self._sorted, runtime_s)
        self._total += runtime_s

    def rse(self) -> float:
        n = len(self._sorted)
        if n < 10:
            return float("inf")
        half = self._Z * math.sqrt(n) / 2
        lo = max(math.floor(n / 2 - half), 0)
        hi = min(math.ceil(n / 2 + half), n - 1)
        median = statistics.median(self._sorted)
        if median <= 0:
            return float("inf")
        return (self._sorted[hi] - self._sorted[lo]) / (2 * self._Z) / median

    def is_finished(self) -> bool:
        return (
            len(self.runtimes) >= self.min_samples and self._total >= self.min_time_s and self.rse() < self.target_rse
        )
