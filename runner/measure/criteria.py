"""Stopping criteria: small classes with reset/add/is_finished, defaults in the constructor."""

from __future__ import annotations

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


CRITERIA: dict[str, type[StoppingCriterion]] = {CoefficientOfVariation.name: CoefficientOfVariation}
