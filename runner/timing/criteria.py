"""Stopping criteria: small classes with reset/add/is_finished, defaults in the constructor, registered by name.

As in nvbench, a timing method names its criterion ("cv", "median-rse") instead of importing a class, so a
new criterion is one class with `@register("its-name")` and a method that names it.
"""

from __future__ import annotations

import bisect
import inspect
import math
import statistics
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar


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


class UnknownCriterionError(LookupError):
    """A criterion name that nothing registered."""


CRITERIA: dict[str, type[StoppingCriterion]] = {}
_Criterion = TypeVar("_Criterion", bound=type[StoppingCriterion])


def register(name: str) -> Callable[[_Criterion], _Criterion]:
    """Class decorator: make a criterion available to `criterion_named` under `name`."""

    def add(cls: _Criterion) -> _Criterion:
        if name in CRITERIA:
            raise ValueError(f"a stopping criterion named {name!r} is already registered ({CRITERIA[name].__name__})")
        cls.name = name
        CRITERIA[name] = cls
        return cls

    return add


def criterion_named(name: str, **params: Any) -> StoppingCriterion:
    """A fresh criterion of the registered `name`, built with `params` (its constructor's keyword arguments)."""
    cls = criterion_class(name)
    accepted = set(inspect.signature(cls).parameters)
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise TypeError(f"stopping criterion {name!r} takes {sorted(accepted)}, not {unknown}")
    return cls(**params)


def criterion_class(name: str) -> type[StoppingCriterion]:
    try:
        return CRITERIA[name]
    except KeyError:
        known = ", ".join(sorted(CRITERIA))
        raise UnknownCriterionError(f"no stopping criterion is named {name!r}; the registered ones: {known}") from None


@register("cv")
class CoefficientOfVariation(StoppingCriterion):
    """The seed's rule: stop once the CV (stdev / mean) of per-sample GFLOPS is under `target_cv`.

    GFLOPS is flops / runtime, so the CV is taken over 1 / runtime; the flop count cancels out.
    """

    def __init__(self, target_cv: float = 0.01, min_samples: int = 5) -> None:
        super().__init__()
        self.target_cv = target_cv
        self.min_samples = max(min_samples, 2)
        self._reset_moments()

    def _reset_moments(self) -> None:
        # Welford's running mean and sum of squared deviations of the rates: the CV is read after every sample,
        # and recomputing it from all samples (statistics.stdev, in exact fractions) made a 1000-sample CPU case
        # spend more time on its stopping rule than on its calls.
        self._count = 0
        self._mean = 0.0
        self._m2 = 0.0

    def reset(self) -> None:
        super().reset()
        self._reset_moments()

    def add(self, runtime_s: float) -> None:
        super().add(runtime_s)
        if runtime_s <= 0:
            return
        rate = 1.0 / runtime_s
        self._count += 1
        delta = rate - self._mean
        self._mean += delta / self._count
        self._m2 += delta * (rate - self._mean)

    def cv(self) -> float:
        if self._count < 2 or self._mean <= 0:
            return float("inf")
        return math.sqrt(max(self._m2, 0.0) / (self._count - 1)) / self._mean

    def is_finished(self) -> bool:
        return len(self.runtimes) >= self.min_samples and self.cv() < self.target_cv


@register("median-rse")
class MedianRelativeError(StoppingCriterion):
    """Stop once the relative standard error of the median runtime is under `target_rse`.

    Unlike the CV, which measures spread and does not shrink with more samples, the standard error of the
    median shrinks as samples accumulate, so a noisy kernel still converges. The error is read off the
    distribution-free 95 % confidence interval of the median (order statistics n/2 ± 0.98·√n), so a few
    outliers cannot stall or fool it. `min_time_s` requires enough summed runtime before stopping.

    At least 10 samples, or `LONG_SAMPLES` once their median is `LONG_SAMPLE_S` or more: a sample that long
    already averages the GPU's jitter over its own length, and 5 samples of a 44 ms call (a naive 4096³ matmul) cost
    0.22 s of a user's wait where 10 cost 0.44 s. At
    5 samples the interval is the whole range (94 % coverage), so the median still stops only when all five lie
    within about 4·`target_rse` of one another.
    """

    _Z = 1.96
    LONG_SAMPLES = 5
    LONG_SAMPLE_S = 10e-3

    def __init__(self, target_rse: float = 0.005, min_samples: int = 10, min_time_s: float = 0.0) -> None:
        super().__init__()
        self.target_rse = target_rse
        self.min_samples = max(min_samples, 10)
        # The configured minimum still holds for long samples when it is above LONG_SAMPLES.
        self.min_long_samples = max(min_samples, self.LONG_SAMPLES)
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
        if n < self.LONG_SAMPLES:
            return float("inf")
        half = self._Z * math.sqrt(n) / 2
        lo = max(math.floor(n / 2 - half), 0)
        hi = min(math.ceil(n / 2 + half), n - 1)
        median = statistics.median(self._sorted)
        if median <= 0:
            return float("inf")
        return (self._sorted[hi] - self._sorted[lo]) / (2 * self._Z) / median

    def enough_samples(self) -> bool:
        n = len(self.runtimes)
        if n >= self.min_samples:
            return True
        return n >= self.min_long_samples and statistics.median(self._sorted) >= self.LONG_SAMPLE_S

    def is_finished(self) -> bool:
        return self.enough_samples() and self._total >= self.min_time_s and self.rse() < self.target_rse
