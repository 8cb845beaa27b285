"""How one benchmark case is timed: by the clock that sees all of each call's work.

The `arena` method hides the host's part of a call from the events on purpose: a covering spin keeps the GPU busy
while the host enqueues the call, so that a kernel's time is its own and not its launch's (DESIGN.md §4). For a
call whose host part is more than a launch, that hides real cost: four threads joined inside the call, a Python
loop of 64 launches, NumPy work before each launch. Such a call costs what a user sees with events around one
synchronised call, and that is the time it gets. Two signs show it, and neither is a verdict:

- the host's time inside the call (the launcher's clock) is over `HOST_PART_TRIGGER_S`: the case is measured again
  with the host's part of every call included (the covering spin shrinks to what the harness itself needs, so
  the GPU reaches START before the call's own host work and waits for it; every sample counts). Where that
  reads more than the covered measurement by over `HOST_BOUND_MARGIN`, the case is host-bound and keeps it.
- the judge's own clock around each batch sees more time per call than the events (runner/judge/judged_timer.py,
  `ClockAgreement`): host work the spin did not cover, or work kept from the events, or readings rewritten on
  their way. The honest time is the larger one in every one of these, and a disagreement of clocks proves none of
  them. A disagreement the judge cannot tell from its host's pauses (`UNSETTLED`) is measured again, at most
  `UNSETTLED_REMEASURES` times; one that stands is measured with the host's part included, as above, and where
  even those events fall short of the judge's clock, the judge's clock times the case.

The case then carries `host_bound` (and `judge_clock` where the judge's clock timed it), and the result says so
in one line.

Noise is not a result either. A ranked case whose samples show a disturbed host (their spread over
`DISTURBED_CV` while tasks waited for a CPU more than `BUSY_STALL_FRACTION` of the time) is measured again, at most
`DISTURBED_REMEASURES` times; if it stays disturbed the run is answered `host_busy` ("too busy to rank"), which
costs no quota, is tried again by the dispatcher, and never enters a board. Test and benchmark runs keep their
numbers: nobody ranks them, and a loaded development machine must still show its user a result.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable

from contract.names import HOST_BOUND_LINE
from contract.wire import CaseTiming
from runner.errors import HostTooNoisyError
from runner.judge.host_load import BUSY_STALL_FRACTION
from runner.judge.judged_timer import ClockAgreement, JudgedTimer

log = logging.getLogger(__name__)

# How often a case whose clocks the host's noise leaves unsettled is measured again before it is timed with the
# host's part included. Each measurement is bounded by the method's time cap, so this bounds the case's time too.
UNSETTLED_REMEASURES = 2

__all__ = ["HOST_BOUND_LINE", "HOST_PART_TRIGGER_S", "UNSETTLED_REMEASURES", "by_judge_clock", "time_case"]

# A ranked case is disturbed when the coefficient of variation of its per-sample GFLOPS is over this and the host
# was busy while it was timed. On a quiet 2-core machine CPU cases read 28-38 %; at load 5 ranked CPU runs read
# 132-372 %, one case at 3.8 ms against its usual 51 µs. A spread alone may be the kernel's own; a busy host alone
# may not have touched this case's samples: both together are what a disturbed measurement looks like.
DISTURBED_CV = 1.0
DISTURBED_REMEASURES = 2
# A call whose host part is longer than this is measured with the host's part included as well: above any launch
# (torch and Triton launch in 5-25 µs from Python, a CUDA kernel in a few), below what host-bound code takes (a
# Python loop of 64 launches about 870 µs on an H200, four threads joined about 1 ms, torch.compile about 95 µs).
HOST_PART_TRIGGER_S = 30e-6
# The host-included median must exceed the covered one by this (relative, absolute) for the case to be host-bound:
# the host-included events also hold the first launch's latency, which the `arena` method leaves out of every case.
HOST_BOUND_MARGIN = (0.10, 5e-6)
# What the host-included events may hold beyond the host's part of the call and the covered time: the first
# launch's latency (a few µs), with room. A call whose host part and this fit inside the margin cannot read more by
# over it, so it is not measured again: a 45 ms naive matmul whose launch took 31 µs on the host was measured twice.
LAUNCH_ALLOWANCE_S = 10e-6

Measure = Callable[[], CaseTiming]


def time_case(timer: JudgedTimer, measure: Measure, *, ranked: bool = False) -> CaseTiming:
    """Measure a case with `measure` (one run of the measurement loop over `timer`) until its clocks agree, or
    time it with the host's part included; a `ranked` case also until its host was quiet enough; see the module's
    docstring."""
    taken = 0

    def counted() -> CaseTiming:
        nonlocal taken
        taken += 1
        return measure()

    timing = _taken(timer, counted, ranked=ranked)
    return timing.model_copy(update={"measurements": taken})


def _taken(timer: JudgedTimer, measure: Measure, *, ranked: bool) -> CaseTiming:
    timing = _by_the_clock_that_sees_all(timer, measure)
    remeasures = 0
    while ranked and _disturbed(timing, timer):
        if remeasures == DISTURBED_REMEASURES:
            raise HostTooNoisyError(
                f"The runner was too busy to rank this run: case {timing.name} was disturbed in "
                f"{remeasures + 1} measurements (the spread of its samples {timing.cv:.0%}, with tasks waiting for "
                "a CPU). Nothing is wrong with the submission: run it again."
            )
        remeasures += 1
        timer.restart()
        timing = _by_the_clock_that_sees_all(timer, measure)
    return timing


def _disturbed(timing: CaseTiming, timer: JudgedTimer) -> bool:
    busy = timer.pressure.busy_fraction()
    return timing.cv > DISTURBED_CV and busy is not None and busy > BUSY_STALL_FRACTION


def _by_the_clock_that_sees_all(timer: JudgedTimer, measure: Measure) -> CaseTiming:
    timing = measure()
    agreement = timer.check()
    remeasures = 0
    while agreement is ClockAgreement.UNSETTLED and remeasures < UNSETTLED_REMEASURES:
        remeasures += 1
        timer.restart()
        timing = measure()
        agreement = timer.check()
    if agreement is not ClockAgreement.AGREES:
        return _host_included(timer, measure, timing)
    timing = _with_wall(timing, timer)
    if not timer.method.covering_spin or timer.host_waits or not _host_part_may_count(timer.host_part_s(), timing):
        return timing
    return _host_included(timer, measure, timing, covered=True)


def _host_part_may_count(host_part_s: float, covered: CaseTiming) -> bool:
    """Whether a call's host part could make its host-included time read more than the covered one by over the
    margin: with all of it serial to the GPU's work, that time is at most the covered time, the host part and a
    launch's latency."""
    if host_part_s <= HOST_PART_TRIGGER_S:
        return False
    relative, least_s = HOST_BOUND_MARGIN
    margin_s = max(relative * covered.runtime_median_us * 1e-6, least_s)
    return host_part_s + LAUNCH_ALLOWANCE_S > margin_s


def _host_included(timer: JudgedTimer, measure: Measure, timing: CaseTiming, *, covered: bool = False) -> CaseTiming:
    """The case measured with the host's part of every call included. `timing` is the covered measurement's; with
    `covered` its clocks agreed, and it stands unless the host-included one reads more by over the margin."""
    if timer.method.covering_spin:
        timer.restart(include_host=True)
        included = by_longer_runtimes(measure(), "host part", timer.call_spans)
        agreement = timer.check()
    else:
        # Without a covering spin (the CPU's method) every sample already holds the host's part of the call: there
        # is nothing to measure differently, only the judge's clock to believe.
        timer.host_bound = True
        included, agreement = timing, ClockAgreement.HOST_BOUND
    if covered and agreement is ClockAgreement.AGREES and not _reads_more(included, timing):
        return timing  # the host's part overlaps the GPU's work: the covered time stands
    included = _with_wall(included, timer)
    if agreement is not ClockAgreement.AGREES:
        included = by_judge_clock(included, timer.wall.estimates)
    return included.model_copy(update={"host_bound": True})


def _reads_more(included: CaseTiming, covered: CaseTiming) -> bool:
    relative, least_s = HOST_BOUND_MARGIN
    return included.runtime_median_us > covered.runtime_median_us + max(
        relative * covered.runtime_median_us, least_s * 1e6
    )


def _with_wall(timing: CaseTiming, timer: JudgedTimer) -> CaseTiming:
    wall = timer.wall_estimate_s()
    return timing.model_copy(
        update={
            "wall_clock_us": None if wall is None else wall * 1e6,
            "host_waits": timer.host_waits,
            "host_part_us": timer.host_part_s() * 1e6 if timer.call_spans else None,
        }
    )


def by_judge_clock(timing: CaseTiming, estimates: list[float]) -> CaseTiming:
    """`timing` with its runtimes raised to the judge's clock's estimates of one call (per checked batch) where
    those are longer; the rates follow the median."""
    if not estimates:
        return timing
    return by_longer_runtimes(timing, "judge clock", estimates).model_copy(update={"judge_clock": True})


def by_longer_runtimes(timing: CaseTiming, what: str, seconds: list[float]) -> CaseTiming:
    """`timing` with its median and mean raised to those of `seconds` (one figure per sample or batch, named `what`
    for the log) where they are longer; the rates follow. Nothing is ever lowered.

    Host-included samples use it with the host's time inside each call: on an H200 their events still missed
    about 70 µs of the call's host work (the GPU is still reading the L2 flush, then the shortest spin, when START
    is recorded), and a call's host part is time the call really took."""
    if not seconds:
        return timing
    median_us = max(timing.runtime_median_us, statistics.median(seconds) * 1e6)
    mean_us = max(timing.runtime_mean_us, statistics.fmean(seconds) * 1e6)
    if median_us == timing.runtime_median_us and mean_us == timing.runtime_mean_us:
        return timing
    log.info(
        "case %s: timed by its %s, %.1f µs against %.1f µs", timing.name, what, median_us, timing.runtime_median_us
    )
    return timing.model_copy(
        update={
            "runtime_median_us": median_us,
            "runtime_mean_us": mean_us,
            "gflops": timing.flops / (median_us / 1e6) / 1e9,
            "gflops_mean": min(timing.gflops_mean, timing.flops / (mean_us / 1e6) / 1e9),
            "gbps": timing.bytes / (median_us / 1e6) / 1e9,
        }
    )
