"""How a case is timed when the judge's clock and the events disagree (runner/judge/case_protocol.py).

The timer here is a scripted stand-in for `JudgedTimer`: it answers `check()` with the agreements given, records
each `restart`, and holds the judge's clock's estimates. The real timer's rules for those answers are in
test_judge_rules.py, and end-to-end runs through the real runner in tests/pipeline/test_integrity_checks.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from contract.wire import CaseTiming
from runner.errors import HostTooNoisyError
from runner.judge.case_protocol import DISTURBED_REMEASURES, UNSETTLED_REMEASURES, by_judge_clock, time_case
from runner.judge.judged_timer import ClockAgreement, WallClock
from runner.timing.methods.arena import ARENA
from runner.timing.methods.base import TimingMethod
from runner.timing.methods.cpu import CPU

AGREES, UNSETTLED, HOST_BOUND = ClockAgreement.AGREES, ClockAgreement.UNSETTLED, ClockAgreement.HOST_BOUND


@dataclass
class ScriptedTimer:
    answers: list[ClockAgreement]
    method: TimingMethod = ARENA
    estimates_s: list[float] = field(default_factory=lambda: [48.5e-6] * 5)
    restarts: list[bool] = field(default_factory=list)
    host_waits: bool = False
    host_bound: bool = False
    wall: WallClock = field(default_factory=WallClock)
    busy: float | None = 0.0  # the host's CPU pressure while the case was timed
    host_part: float = 5e-6  # the host's time inside each call, by the launcher's clock

    def host_part_s(self) -> float:
        return self.host_part

    @property
    def call_spans(self) -> list[float]:
        return [self.host_part] * 5

    @property
    def pressure(self) -> SimpleNamespace:
        return SimpleNamespace(busy_fraction=lambda: self.busy)

    def check(self) -> ClockAgreement:
        self.wall.estimates = list(self.estimates_s)
        return self.answers.pop(0)

    def restart(self, *, include_host: bool = False) -> None:
        self.restarts.append(include_host)
        self.host_bound = self.host_bound or include_host

    def wall_estimate_s(self) -> float | None:
        return sorted(self.wall.estimates)[len(self.wall.estimates) // 2] if self.wall.estimates else None


def _timing(median_us: float, cv: float = 0.01) -> CaseTiming:
    return CaseTiming(
        index=0,
        name="n=1000003",
        dims=[1000003],
        method="arena",
        runtime_median_us=median_us,
        runtime_mean_us=median_us * 1.1,
        gflops=1000003 / median_us / 1e3,
        gflops_mean=1000003 / median_us / 1e3,
        gbps=12e6 / median_us / 1e3,
        flops=1000003,
        bytes=12_000_036,
        samples=100,
        cv=cv,
        converged=True,
    )


def _measures(*medians_us: float, cvs: tuple[float, ...] = ()) -> tuple[list[float], object]:
    """A measure function that returns timings of the given medians (and CVs) in turn, and the list of the medians
    it returned."""
    given: list[float] = []
    pending = list(medians_us)
    spreads = list(cvs)

    def measure() -> CaseTiming:
        given.append(pending.pop(0))
        return _timing(given[-1], spreads.pop(0) if spreads else 0.01)

    return given, measure


def test_clocks_that_agree_keep_the_events_time() -> None:
    timer = ScriptedTimer([AGREES])
    given, measure = _measures(13.7)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timing.runtime_median_us == 13.7 and not timing.host_bound and not timing.judge_clock
    assert timer.restarts == [] and given == [13.7]
    assert timing.wall_clock_us == pytest.approx(48.5)
    assert timing.measurements == 1


def test_a_host_bound_call_is_measured_again_with_the_host_part_included() -> None:
    # The four-thread vector add of the H200 report: events 13.7 µs with the covering spin, 48.5 µs on the judge's
    # clock. Measured again with the host's part included, its events read what the call costs, and agree.
    timer = ScriptedTimer([HOST_BOUND, AGREES])
    _, measure = _measures(13.7, 47.0)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [True]
    assert timing.host_bound and not timing.judge_clock
    assert timing.runtime_median_us == 47.0


def test_a_call_whose_host_part_outlasts_its_gpu_work_is_timed_with_it() -> None:
    # A Python loop of 64 slice launches on an H200: about 870 µs on the host, 152 µs of GPU work. The covering spin
    # hides the host's part from both clocks; measured with it included, the events read what the call costs.
    timer = ScriptedTimer([AGREES, AGREES], host_part=870e-6)
    given, measure = _measures(152.6, 871.9)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [True] and given == [152.6, 871.9]
    assert timing.host_bound and not timing.judge_clock and timing.runtime_median_us == 871.9
    assert timing.measurements == 2


def test_a_host_bound_call_is_never_timed_below_its_host_part() -> None:
    # torch.compile at n=1000003 on an H200: 116.5 µs of host work per call, 47.4 µs in the host-included events
    # (the GPU was still reading the L2 flush when START was recorded), 113.7 µs by events around one synchronised
    # call.
    timer = ScriptedTimer([AGREES, AGREES], host_part=116.5e-6)
    _, measure = _measures(10.8, 47.4)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timing.host_bound and timing.runtime_median_us == pytest.approx(116.5)
    assert timing.host_part_us == pytest.approx(116.5)


def test_a_host_part_that_overlaps_the_gpu_work_keeps_the_covered_time() -> None:
    # A host part of 400 µs before a kernel of 2.6 ms: it could read more than the 10 % margin, so the case is
    # measured with it included. The events read the first launch's latency more, within the margin: the covered
    # time stands.
    timer = ScriptedTimer([AGREES, AGREES], host_part=400e-6)
    given, measure = _measures(2600.0, 2610.0)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [True] and given == [2600.0, 2610.0]
    assert not timing.host_bound and timing.runtime_median_us == 2600.0


@pytest.mark.parametrize(("host_part_us", "covered_us"), [(95.0, 2600.0), (31.0, 45600.0)])
def test_a_host_part_inside_the_margin_is_not_measured_again(host_part_us: float, covered_us: float) -> None:
    # torch.compile's 95 µs before a 2.6 ms kernel; a naive 4096^3 matmul (45.6 ms) whose launch took 31 µs on the
    # host. Even serial to the GPU's work, neither could read over the 10 % margin: one measurement.
    timer = ScriptedTimer([AGREES], host_part=host_part_us * 1e-6)
    given, measure = _measures(covered_us)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [] and given == [covered_us] and timing.measurements == 1
    assert not timing.host_bound and timing.runtime_median_us == covered_us


def test_a_host_part_just_past_the_margin_is_measured_with_it_included() -> None:
    # 255 µs of host work and a 2.6 ms kernel: with the launch's allowance it could read over the 260 µs margin.
    timer = ScriptedTimer([AGREES, AGREES], host_part=255e-6)
    given, measure = _measures(2600.0, 2900.0)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [True] and given == [2600.0, 2900.0]
    assert timing.host_bound and timing.runtime_median_us == 2900.0


def test_a_call_that_waits_for_the_gpu_is_not_measured_a_second_time() -> None:
    timer = ScriptedTimer([AGREES], host_part=900e-6, host_waits=True)
    given, measure = _measures(900.0)
    assert not time_case(timer, measure).host_bound  # type: ignore[arg-type]
    assert given == [900.0] and timer.restarts == []


def test_an_unsettled_case_is_measured_again_a_bounded_number_of_times() -> None:
    timer = ScriptedTimer([UNSETTLED, UNSETTLED, AGREES])
    _, measure = _measures(10.0, 10.5, 10.2)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [False, False] and not timing.host_bound
    assert timing.runtime_median_us == 10.2
    assert timing.measurements == 3  # every measurement counted, the result says how many it took


def test_a_case_that_stays_unsettled_is_timed_with_the_host_part_included_never_rejected() -> None:
    answers = [UNSETTLED] * (1 + UNSETTLED_REMEASURES) + [AGREES]
    timer = ScriptedTimer(answers)
    _, measure = _measures(*([10.0] * (1 + UNSETTLED_REMEASURES)), 12.0)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [False] * UNSETTLED_REMEASURES + [True]
    assert timing.host_bound and timing.runtime_median_us == 12.0


def test_events_still_short_with_the_host_included_give_way_to_the_judge_clock() -> None:
    # Work kept from the events (or readings rewritten) still shows on the judge's clock: the case costs that.
    timer = ScriptedTimer([HOST_BOUND, HOST_BOUND], estimates_s=[115e-6, 114e-6, 116e-6, 115e-6, 117e-6])
    _, measure = _measures(60.0, 61.0)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timing.host_bound and timing.judge_clock
    assert timing.runtime_median_us == pytest.approx(115.0)
    assert timing.gflops == pytest.approx(1000003 / 115e-6 / 1e9)


def test_the_cpu_method_believes_its_clock_without_measuring_again() -> None:
    # Without a covering spin every CPU sample already holds the call's host part: nothing to measure differently.
    timer = ScriptedTimer([HOST_BOUND], method=CPU, estimates_s=[5e-6] * 5)
    given, measure = _measures(0.04)
    timing = time_case(timer, measure)  # type: ignore[arg-type]
    assert timer.restarts == [] and given == [0.04]
    assert timing.host_bound and timing.judge_clock and timing.runtime_median_us == pytest.approx(5.0)


def test_the_judge_clock_never_lowers_a_time() -> None:
    timing = by_judge_clock(_timing(20.0), [10e-6, 11e-6, 9e-6])
    assert timing.runtime_median_us == 20.0 and timing.runtime_mean_us == pytest.approx(22.0)
    assert timing.gflops == pytest.approx(1000003 / 20e-6 / 1e9)


def test_a_disturbed_ranked_case_is_measured_again_until_the_host_is_quiet() -> None:
    # At load 5 a ranked CPU case read 3.8 ms against its usual 51 µs, with a CV of 372 %.
    timer = ScriptedTimer([AGREES, AGREES], method=CPU, busy=0.6)
    given, measure = _measures(3800.0, 51.0, cvs=(3.72, 0.3))
    timing = time_case(timer, measure, ranked=True)  # type: ignore[arg-type]
    assert given == [3800.0, 51.0] and timer.restarts == [False]
    assert timing.runtime_median_us == 51.0


def test_a_ranked_case_that_stays_disturbed_is_too_busy_to_rank() -> None:
    timer = ScriptedTimer([AGREES] * (1 + DISTURBED_REMEASURES), method=CPU, busy=0.6)
    _, measure = _measures(*([3800.0] * (1 + DISTURBED_REMEASURES)), cvs=(3.72,) * (1 + DISTURBED_REMEASURES))
    with pytest.raises(HostTooNoisyError, match="too busy to rank this run"):
        time_case(timer, measure, ranked=True)  # type: ignore[arg-type]


def test_a_wide_spread_on_a_quiet_host_is_the_kernel_own_and_is_ranked() -> None:
    timer = ScriptedTimer([AGREES], method=CPU, busy=0.0)
    given, measure = _measures(51.0, cvs=(1.5,))
    assert time_case(timer, measure, ranked=True).runtime_median_us == 51.0  # type: ignore[arg-type]
    assert given == [51.0]


def test_benchmark_runs_keep_their_numbers_on_a_busy_host() -> None:
    timer = ScriptedTimer([AGREES], method=CPU, busy=0.6)
    _, measure = _measures(3800.0, cvs=(3.72,))
    assert time_case(timer, measure).runtime_median_us == 3800.0  # type: ignore[arg-type]
