"""The measurement loop and its stopping criteria, driven by deterministic sample streams."""

from __future__ import annotations

import itertools
import random

import pytest

from contract.wire import MeasureConfig
from runner.errors import ImplausibleTimeError
from runner.timing.criteria import CoefficientOfVariation, MedianRelativeError
from runner.timing.measurement import Measurement


def noisy(median_s: float, spread: float, seed: int = 0):
    rng = random.Random(seed)
    return lambda: median_s * (1 + rng.uniform(-spread, spread))


def test_median_rse_converges_on_noise_that_never_meets_a_cv_target():
    draw = noisy(1e-5, 0.3)
    rse, cv = MedianRelativeError(target_rse=0.01), CoefficientOfVariation(target_cv=0.01)
    for _ in range(2000):
        t = draw()
        rse.add(t)
        cv.add(t)
    assert rse.is_finished()
    assert not cv.is_finished()
    assert cv.cv() > 0.1


def test_median_rse_shrinks_as_samples_accumulate():
    draw = noisy(1e-5, 0.2, seed=3)
    crit = MedianRelativeError()
    values = []
    for n in (20, 200, 2000):
        while len(crit.runtimes) < n:
            crit.add(draw())
        values.append(crit.rse())
    assert values[0] > values[1] > values[2]


def test_median_rse_ignores_a_few_huge_outliers():
    crit = MedianRelativeError(target_rse=0.005, min_samples=10)
    for i in range(200):
        crit.add(1e3 if i % 50 == 0 else 1e-5)
    assert crit.is_finished()


def test_median_rse_waits_for_minimum_samples_and_time():
    crit = MedianRelativeError(target_rse=0.5, min_samples=30, min_time_s=1e-3)
    for _ in range(29):
        crit.add(1e-5)
    assert not crit.is_finished()
    for _ in range(70):
        crit.add(1e-5)
    assert not crit.is_finished()  # 100 x 10 us = 1 ms is not yet over the floor
    crit.add(1e-5)
    assert crit.is_finished()


class ScriptedTimer:
    """A real timer object whose samples come from a script; None means a dropped sample."""

    def __init__(self, samples):
        self.samples = iter(samples)

    def __call__(self, call):
        call()
        return next(self.samples)


def test_measurement_rotates_input_sets_and_reports_the_median():
    used = []
    calls = [lambda k=k: used.append(k) for k in range(3)]
    timer = ScriptedTimer(itertools.chain([1e-5] * 3, itertools.cycle([1e-5, 2e-5, 3e-5])))
    config = MeasureConfig(method="arena", min_samples=10, max_samples=30, target_rse=1e-9)
    timing = Measurement(calls, timer, config, flops=2000, bytes=4000).run(0, "case", [1])
    assert timing.samples == 30
    assert timing.runtime_median_us == pytest.approx(20.0)
    assert timing.gflops == pytest.approx(2000 / 2e-5 / 1e9)
    assert timing.gbps == pytest.approx(4000 / 2e-5 / 1e9)
    assert used[3:9] == [0, 1, 2, 0, 1, 2]
    assert not timing.converged


def test_measurement_counts_dropped_samples_and_still_stops():
    timer = ScriptedTimer(itertools.chain([1e-5], itertools.cycle([None, 1e-5])))
    config = MeasureConfig(method="arena", min_samples=10, max_samples=50)
    timing = Measurement([lambda: None], timer, config, flops=1, bytes=1).run(0, "c", [])
    assert timing.converged and timing.samples == 10
    assert timing.dropped_samples == 10


def test_measurement_that_keeps_no_sample_is_rejected_as_implausible():
    timer = ScriptedTimer(itertools.repeat(None))
    config = MeasureConfig(method="arena", min_samples=10, max_samples=20)
    with pytest.raises(ImplausibleTimeError, match="no sample"):
        Measurement([lambda: None], timer, config, flops=1, bytes=1).run(0, "c", [])


def test_seed_method_stops_on_the_cv_target():
    timer = ScriptedTimer(itertools.repeat(1e-5))
    config = MeasureConfig(method="seed", min_samples=5, max_samples=1000)
    timing = Measurement([lambda: None], timer, config, flops=1, bytes=1).run(0, "c", [])
    assert timing.samples == 5 and timing.cv == pytest.approx(0.0)


@pytest.mark.parametrize("bad", [0.0, -1e-6, float("nan"), float("inf")])
def test_a_sample_that_cannot_be_real_stops_the_measurement(bad):
    from runner.errors import ImplausibleTimeError

    timer = ScriptedTimer(itertools.chain([1e-5, 1e-5, 1e-5], itertools.repeat(bad)))
    config = MeasureConfig(method="arena", min_samples=10, max_samples=50)
    with pytest.raises(ImplausibleTimeError):
        Measurement([lambda: None], timer, config, flops=1, bytes=1).run(0, "c", [])


def test_the_running_cv_matches_the_exact_statistics_after_every_sample() -> None:
    import statistics

    draw = noisy(2e-3, 0.3, seed=7)
    criterion = CoefficientOfVariation(target_cv=1e-9, min_samples=2)
    for n in range(1, 300):
        criterion.add(draw())
        rates = [1 / t for t in criterion.runtimes]
        exact = statistics.stdev(rates) / statistics.fmean(rates) if n > 1 else float("inf")
        assert criterion.cv() == pytest.approx(exact, rel=1e-9)
    criterion.reset()
    assert criterion.cv() == float("inf")
    criterion.add(1e-3)
    criterion.add(2e-3)
    assert criterion.cv() == pytest.approx(statistics.stdev([1e3, 5e2]) / statistics.fmean([1e3, 5e2]), rel=1e-12)


def test_median_rse_takes_ten_short_samples_however_close():
    crit = MedianRelativeError(target_rse=0.005, min_samples=5)
    for _ in range(9):
        crit.add(1.0e-3)
    assert not crit.is_finished()
    crit.add(1.0e-3)
    assert crit.is_finished()


def test_median_rse_goes_on_past_five_long_samples_that_spread():
    crit = MedianRelativeError(target_rse=0.005, min_samples=5)
    for t in (40e-3, 44e-3, 48e-3, 42e-3, 46e-3):
        crit.add(t)
    assert not crit.is_finished()


@pytest.mark.parametrize("configured, stops_at", [(5, 5), (8, 8)])
def test_median_rse_stops_long_samples_that_agree_at_five_or_the_configured_minimum(configured, stops_at):
    crit = MedianRelativeError(target_rse=0.005, min_samples=configured)
    for t in [44.0e-3, 44.1e-3, 43.9e-3, 44.05e-3, 44.02e-3, 44.0e-3, 43.95e-3, 44.1e-3][: stops_at - 1]:
        crit.add(t)
    assert not crit.is_finished()
    crit.add(44.03e-3)
    assert crit.is_finished()
