"""The judge's timer: samples are taken by the launcher in batches, and count only after the judge checked them.

A batch (runner/launcher/harness.py has the launcher's side) runs one sample on each input set of the case, back to
back, in one request:
- before it, every set gets fresh input values and NaN outputs, drawn in the judge's own memory and context;
- after it, the judge verifies every output element of every set, requires each on-stream snapshot to equal
  its output bit for bit, no host thread left behind, and no torch mode left active;
- the judge times the whole batch with its own clock.

With each batch of solution samples comes a batch of calibration samples on the same sets, identical except
that a spin kernel of a duration the judge measured itself replaces the solution. Per case:
- the calibration samples must read the spin's known duration (a timer scaled, shifted or frozen in the
  launcher fails this);
- the wall clock: the solution batches' time per sample, minus the calibration batches', plus the known spin,
  is what a sample really took. When the reported times fall short of it beyond the clock's noise, the call
  costs more than its events say: host work inside the call, or work hidden from the events, or readings
  rewritten on their way. Which of these it is does not matter, and a disagreement of two clocks proves none of
  them, so the check accuses nobody: it says whether the clocks agree (`ClockAgreement`), and the case is then
  timed by the clock that sees all the work (runner/judge/case_protocol.py).

Kept as one module: the timer and its checks read the same batches: the calibration, the wall clock and the spin
sizing must change together, and they are part of the timing protocol's digest as one file.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from runner.errors import IntegrityError
from runner.judge.case_buffers import CaseBuffers
from runner.judge.host_load import BUSY_STALL_FRACTION, CpuPressure
from runner.judge.launcher_link import Batch, LauncherLink, Reading
from runner.timing.calibration import EMPTY_KERNEL_NCU_US, event_overhead_s, known_work
from runner.timing.gpu import MAX_SPIN_S, MIN_SPIN_S, GpuSensors, covering_spin_s
from runner.timing.methods import TimingMethod

log = logging.getLogger(__name__)

MIN_CHECKED_BATCHES = 5
# A case whose wall-clock shortfall is over the bound after MIN_CHECKED_BATCHES gets this many batches in all
# before the verdict, once: the median of more batches separates host noise from hidden work, which does
# not average away.
RECHECK_BATCHES = 15
# Batches hold as many samples as fit the method's batch budget (TimingMethod.batch_budget_s; at most one per input
# set): big batches for small kernels, where the wall clock needs many samples to average the host's jitter; one
# sample for a kernel that runs for seconds, so that a slow solution is not run dozens of times more than it needs.
FIRST_BATCH = 3
# Samples of the empty kernel behind the event-overhead correction.
EMPTY_SAMPLES = 32
# A first sample this slow is estimate enough: the other samples of the first batch are not taken.
SLOW_CALL_S = 5e-3
# How long threads that outlived a batch get to finish exiting before they count as left running.
THREAD_SETTLE_S = 1.0
THREAD_SETTLE_POLL_S = 0.01
# Deadlines of one batch request, so that a call that hangs (a kernel that never ends) stops the job within
# seconds instead of holding the GPU until the phase deadline. The first batch may still pay one-off costs; a
# later one gets a generous multiple of what the calls took in the first.
FIRST_BATCH_TIMEOUT_S = 60.0
BATCH_TIMEOUT_BASE_S = 10.0
BATCH_TIMEOUT_SLACK = 50.0
KNOWN_SPIN_MIN_S = 20e-6
# The known spin is as long as a call, up to this. Each solution batch pays a calibration batch of it and three
# of the judge's own readings: at 1 ms, calls of a millisecond or more spent 0.22 s of a 2.6 s job on them (an H200,
# a naive matmul's four cases). A timer rewritten beyond the cap reads wrong against the judge's clock instead,
# and the case is then timed by that clock (case_protocol.py).
KNOWN_SPIN_MAX_S = 250e-6
# The CPU's known work keeps its 1 ms cap, under which its floor check was tuned on a loaded 2-core host.
KNOWN_WORK_MAX_S = 1e-3
# The calibration samples' median must match the known spin within this (relative, absolute).
PURE_TOLERANCE = (0.10, 3e-6)
# On the CPU the calibration call is known work (runner.timing.calibration.known_work), which a loaded host can
# only make longer: its readings may not fall under this share of the judge's own fastest time for the same work.
# A clock scaled to 1 % (tests/adversarial/submissions/patch_harness_objects.py) reads 0.01.
CPU_CALIBRATION_FLOOR = 0.5
# The judge times the known work this many times and keeps the fastest: its own pauses only add time.
KNOWN_WORK_REPEATS = 5
# How far the reported time may fall short of the judge's wall-clock estimate is the method's
# (TimingMethod.wall_tolerance and gross_shortfall, in runner/timing/methods/).
# A shortfall of the median that the least disturbed batches explain counts as agreement only when this many
# solution batches, each against the fastest calibration batch, account for the reported time. One fast solution
# batch is no evidence: on an H100 a side-stream cheat whose calls took 115 µs on the judge's clock against 60 µs
# reported (batches of one sample, each about 2 ms of harness) once looked timed right on its fastest batch alone.
CORROBORATING_BATCHES = 3


class ClockAgreement(Enum):
    """What the judge's clock says of the reported times of a case. None of these is a verdict."""

    AGREES = "agrees"
    """The readings account for the call's time, within the clock's noise."""
    UNSETTLED = "unsettled"
    """The median says the readings fall short, but the least disturbed batches, or a busy host, leave it open
    whether the host's pauses made the difference: measure again."""
    HOST_BOUND = "host_bound"
    """The judge's clock sees more time per call than the readings, beyond its noise, even on the least disturbed
    batches: the call costs more than its events say, and is timed with the host's part included."""


# The most GPU idle time (in spins) one uncovered sample may account for in the wall-clock check.
UNCOVERED_EXCUSE_SPINS = 2
# The spin grows when more than this fraction (numerator, denominator) of a batch's samples were not covered.
UNCOVERED_GROWTH_FRACTION = (1, 4)
# A call that waits for the GPU inside (a synchronise, `.item()`, a blocking copy) can never be covered: the host
# catches up with the GPU in every sample, however long the spin. After this many batches in a row in which no
# sample was covered and the GPU had passed START whenever the call returned (the spin growing in between), the
# case is timed with the host's part of that wait included, as the user's code really costs, and every sample
# counts. Mistaking a very slow host for such a call costs fidelity (the readings include host time, so they can
# only be longer), never a verdict.
WAITING_EVIDENCE_BATCHES = 2


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _upper_quartile(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, (3 * len(ordered)) // 4)] if ordered else 0.0


def _uncovered(reading: Reading) -> bool:
    """The spin ended before the host had enqueued the sample: the GPU waited for the host at least once."""
    return reading.covered_s is not None and reading.covered_s < reading.host_span_s


@dataclass
class WallClock:
    """Per checked batch: the judge's clock's estimate of one sample's time, and the mean reported time.

    Compared batch by batch and summarised by the median, so that one slow wake-up of the judge (a scheduler
    slice on a busy host) cannot decide a verdict either way.
    """

    estimates: list[float] = field(default_factory=list)
    reported: list[float] = field(default_factory=list)
    per_sample: list[tuple[float, float]] = field(default_factory=list)
    # Per batch: a solution sample's time net of excused idle, a calibration sample's time, the known spin.
    best_parts: list[tuple[float, float, float]] = field(default_factory=list)

    def add(
        self, solution_wall: float, calibration_wall: float, known_s: float, readings: list[Reading], spin_s: float
    ) -> None:
        n = len(readings)
        # A sample whose spin did not cover the host left the GPU idle for a while: that time is on the clock but
        # in no reading. The launcher's word for it is capped, so claiming it cannot excuse much.
        idle = sum(
            min(max(r.host_span_s - (r.covered_s or 0.0), 0.0), UNCOVERED_EXCUSE_SPINS * spin_s)
            for r in readings
            if _uncovered(r)
        )
        self.estimates.append((solution_wall - calibration_wall - idle) / n + known_s)
        self.reported.append(sum(r.elapsed_s for r in readings) / n)
        self.per_sample.append((solution_wall / n, calibration_wall / n))
        self.best_parts.append(((solution_wall - idle) / n, calibration_wall / n, known_s))

    def describe(self) -> str:
        solution = _median([p[0] for p in self.per_sample]) * 1e6
        calibration = _median([p[1] for p in self.per_sample]) * 1e6
        return f"{solution:.1f} µs per solution sample against {calibration:.1f} µs per calibration sample"

    @property
    def batches(self) -> int:
        return len(self.estimates)

    def shortfall(self) -> float:
        """The median of (estimate - reported) over batches: how much time the readings leave unexplained."""
        return statistics.median(e - r for e, r in zip(self.estimates, self.reported, strict=True))

    def best_case_shortfall(self) -> float:
        """The estimate from the least disturbed batches (the fastest solution batch against the fastest
        calibration batch) minus the median reported time. The host's pauses only ever add time, so on a busy
        host this is the estimate that load inflates least; readings that were shrunk, or work kept off the
        events, leave it short all the same."""
        return self.least_disturbed_shortfalls()[0]

    def least_disturbed_shortfalls(self) -> list[float]:
        """Per solution batch, fastest first: its time against the fastest calibration batch's, plus the known
        spin, minus the median reported time. The first is the best case; how many of them a tolerance admits
        says whether one lucky batch or the host's pauses made the difference with the median."""
        calibration = min(p[1] for p in self.best_parts)
        known = statistics.median(p[2] for p in self.best_parts)
        reported = statistics.median(self.reported)
        return sorted(p[0] - calibration + known - reported for p in self.best_parts)


@dataclass
class JudgedTimer:
    """A SampleTimer (runner.timing.measurement) fed by batches; the `call` it is given is not used."""

    link: LauncherLink
    buffers: CaseBuffers
    verify: Callable[[int], None]  # raises WrongAnswerError when a set's output is wrong
    method: TimingMethod  # what to check and how samples are taken (runner/timing/methods/)
    seed: int
    index: int
    device_name: str = ""
    sensors: GpuSensors | None = None
    spin_s: float = MIN_SPIN_S
    overhead_s: float = 0.0
    cycles_per_s: float = 2.0e9  # an upper bound on the SM clock until measured
    known_cycles: int = 0
    known_s: float = 0.0
    # A host-side bound on one call, from the first batch: the later batches' deadline.
    call_estimate_s: float | None = None
    batch_size: int = 64
    trials: bool = False
    pending: deque[float | None] = field(default_factory=deque)
    # Per calibration batch: the launcher's median reading of the known spin, and the judge's own just after.
    calibration: list[tuple[float, float]] = field(default_factory=list)
    wall: WallClock = field(default_factory=WallClock)
    # For the messages and logs: how often the spin did not cover the host, and how long the host took.
    host_spans: list[float] = field(default_factory=list)
    # The host's time inside each timed call (the launcher's clock), for telling a host-bound call (case_protocol).
    call_spans: list[float] = field(default_factory=list)
    uncovered_samples: int = 0
    # Set once the call is seen to wait for the GPU inside (WAITING_EVIDENCE_BATCHES).
    host_waits: bool = False
    # Set when the judge's clock saw more time per call than the readings (ClockAgreement.HOST_BOUND): the case is
    # measured again with the spin covering only the harness, so the events see the host's part of each call.
    host_bound: bool = False
    # Whether the batches, the spin, the event overhead and the known spin are sized: a case measured again keeps them.
    calibrated: bool = False
    # The covering spin as the first measurement sized it, for a case measured again from the start.
    sized_spin_s: float = MIN_SPIN_S
    waiting_batches: int = 0
    # The spin that covers the harness's own enqueue work, without the call: all a waiting call can use.
    harness_spin_s: float = MIN_SPIN_S
    # How busy the host's CPUs were while the case was checked: load is no evidence of hidden work.
    pressure: CpuPressure = field(default_factory=CpuPressure)

    @property
    def case_name(self) -> str:
        return str(self.buffers.case["name"])

    @property
    def sets(self) -> list[int]:
        """The sets of the next batch: as many as fit the batch's time budget, at most all of the case's."""
        return list(range(min(self.batch_size, len(self.buffers.sets))))

    # --- the SampleTimer interface ---

    def calibrate(self, _call: object) -> None:
        """Size the batches and the spin from a first small batch, measure the event overhead and set the
        known spin. A case measured again (`restart`) keeps what its first measurement sized."""
        if self.calibrated:
            return
        self.calibrated = True
        self.batch_size = 1
        readings = self._solution_batch().readings
        if readings[0].elapsed_s < SLOW_CALL_S:
            self.batch_size = FIRST_BATCH - 1
            readings += self._solution_batch().readings
        # These samples are the warm-up as well (Measurement.run_warmup takes one; start_trials drops the rest):
        # the calls have run, their one-off costs are paid, and another batch would only repeat them.
        self.pending.extend(r.elapsed_s for r in readings)
        estimate = _median([r.elapsed_s for r in readings])
        self.call_estimate_s = max(_median([max(r.host_span_s, r.elapsed_s) for r in readings]), estimate)
        self.batch_size = max(1, min(len(self.buffers.sets), int(self.method.batch_budget_s / max(estimate, 1e-7))))
        if not self.method.covering_spin:
            if self.method.calibration_check:
                self._measure_known_work(min(max(estimate, KNOWN_SPIN_MIN_S), KNOWN_WORK_MAX_S))
            return
        # The first sample of a case pays one-off costs (lazy module loading, first touches): sizing the spin
        # on it once made every later sample carry a 5 ms spin, and the wall clock drown in the spin's jitter.
        settled = readings[1:] or readings
        self.spin_s = self.sized_spin_s = covering_spin_s(_median([r.host_span_s for r in settled]))
        self.harness_spin_s = covering_spin_s(_median([max(r.host_span_s - r.call_s, 0.0) for r in settled]))
        self._note_waiting(readings)
        if self.method.event_overhead_correction:
            self.overhead_s = self._event_overhead()
        if self.method.calibration_check:
            self._measure_known_spin(min(max(estimate, KNOWN_SPIN_MIN_S), KNOWN_SPIN_MAX_S))

    def start_trials(self) -> None:
        self.trials = True
        self.pending.clear()
        self.pressure.start()

    def __call__(self, _call: object) -> float | None:
        if not self.pending:
            self._run_batch()
        return self.pending.popleft()

    # --- checks at the end of a case ---

    def check(self) -> ClockAgreement:
        """Raise IntegrityError when the calibration samples do not read the known spin (a timer rewritten); say
        whether the judge's own clock agrees with the readings."""
        if not self.method.checks_readings:
            return ClockAgreement.AGREES
        while self.wall.batches < MIN_CHECKED_BATCHES:
            self._run_batch()
        if self.method.calibration_check:
            self._check_calibration()
        if not self.method.wall_clock_check:
            return ClockAgreement.AGREES
        if self._over_wall_tolerance():
            while self.wall.batches < RECHECK_BATCHES:
                self._run_batch()
        return self._wall_agreement()

    def restart(self, *, include_host: bool = False) -> None:
        """Forget this case's samples and checked batches, for a new measurement with the same sizing; with
        `include_host`, one whose events see the host's part of every call: the spin covers only the harness's own
        enqueue work, and every sample counts, covered or not. Without it, the case starts again as first sized
        (a call found to wait for the GPU still counts its wait)."""
        self.trials = False
        self.pending.clear()
        self.calibration.clear()
        self.wall = WallClock()
        self.host_spans = []
        self.call_spans = []
        self.uncovered_samples = 0
        self.waiting_batches = 0
        self.host_bound = include_host
        if not self.method.covering_spin:
            return
        # A host-bound call gets the shortest spin: whatever of the call's host work runs while the spin does is
        # hidden from the events, and the harness's own sizing (taken from spans that include its copies after the
        # call) left up to a few hundred µs of it hidden on a loaded H200 host.
        if self.host_bound:
            self.spin_s = MIN_SPIN_S
        else:
            self.spin_s = self.harness_spin_s if self.host_waits else self.sized_spin_s

    def host_part_s(self) -> float:
        """The median host time inside the timed calls, by the launcher's clock (0 before any)."""
        return _median(self.call_spans)

    @property
    def counts_host(self) -> bool:
        """Whether every sample counts with the host's part of the call in it (a waiting or host-bound call)."""
        return self.host_waits or self.host_bound

    def _check_calibration(self) -> None:
        # Each calibration batch against the judge's own reading of the same spin taken right after it, at the
        # same clock: a GPU still raising its clocks makes a spin of fixed cycles shorter from one moment to the next.
        known = _median([k for _, k in self.calibration])
        measured = known + _median([m - k for m, k in self.calibration])
        if self.method.on_gpu:
            off = abs(measured - known) > PURE_TOLERANCE[0] * known + PURE_TOLERANCE[1]
        else:
            off = measured < CPU_CALIBRATION_FLOOR * known
        if off:
            raise IntegrityError(
                f"The timer disagreed with the calibration kernel on case {self.case_name}: it reported "
                f"{measured * 1e6:.1f} µs for a kernel the runner measured at {known * 1e6:.1f} µs. Something in "
                "the solution's process changed how time is measured."
            )

    def wall_estimate_s(self) -> float | None:
        """The judge's own estimate of one sample's time, from the wall clock; None before any check."""
        return _median(self.wall.estimates) if self.wall.batches else None

    def _over_wall_tolerance(self) -> bool:
        return self._short(self.wall.shortfall(), _median(self.wall.estimates))

    def _short(self, shortfall: float, estimate: float) -> bool:
        """Whether readings fall short of the judge's estimate by more than the clock's resolution (the method's
        wall tolerance); or, for a method with a gross-shortfall rule (the CPU's), by far more than any harness
        overhead could explain: a call reported at a tenth of its time (a 4 µs call rewritten to 0.04 µs slipped
        under the absolute bound)."""
        tolerance = self.method.wall_tolerance
        if tolerance is None:
            return False  # a method without a wall-clock check is never short
        relative, least = tolerance
        if shortfall > max(relative * estimate, least):
            return True
        return self._gross(shortfall, estimate)

    def _gross(self, shortfall: float, estimate: float) -> bool:
        """Whether the readings leave out most of the time (the method's gross-shortfall rule): more than any
        harness overhead or host pause explains."""
        gross = self.method.gross_shortfall
        return gross is not None and shortfall > gross[1] and estimate - shortfall < gross[0] * estimate

    def _wall_agreement(self) -> ClockAgreement:
        if not self._over_wall_tolerance():
            return ClockAgreement.AGREES
        reported = _median(self.wall.reported)
        shortfalls = self.wall.least_disturbed_shortfalls()
        best = shortfalls[0]
        if not self._short(best, best + reported):
            accounting = sum(not self._short(s, s + reported) for s in shortfalls)
            if accounting >= min(CORROBORATING_BATCHES, len(shortfalls)):
                return ClockAgreement.AGREES  # the least disturbed batches account for the time: the host paused
            if self.method.gross_shortfall is not None:
                # The CPU's method keeps the best case alone: on a loaded 2-core host an honest torch.mv had only
                # 2 of 17 batches account for its time, on every retry, since the CPU's clock carries the host's
                # pauses in every batch. The GPU methods' batches of one sample scatter by tens of µs: they need
                # corroboration.
                return ClockAgreement.AGREES
            # The median says short and only the luckiest batch or two say otherwise: the clock's scatter alone
            # can do that.
            return self._disagreement(
                ClockAgreement.UNSETTLED,
                f"only {accounting} of {len(shortfalls)} batches account for the reported time",
            )
        busy = self.pressure.busy_fraction()
        if busy is not None and busy > BUSY_STALL_FRACTION:
            return self._disagreement(ClockAgreement.UNSETTLED, f"tasks waited for a CPU {busy:.0%} of the time")
        if self.method.gross_shortfall is not None and not self._gross(best, best + reported):
            # On the CPU the harness's own work around a call (its bookkeeping, the reply) runs slower after a
            # call that swept the caches than after the empty calibration call: on a small virtual machine that
            # alone put honest solutions 30 % short, now and then.
            return self._disagreement(ClockAgreement.UNSETTLED, "a moderate shortfall on the CPU")
        return self._disagreement(ClockAgreement.HOST_BOUND, "the least disturbed batches are short as well")

    def _disagreement(self, agreement: ClockAgreement, why: str) -> ClockAgreement:
        log.info(
            "case %s: the judge's clock says %.1f µs per call against %.1f µs reported (%s; %s; %s): %s",
            self.case_name,
            _median(self.wall.estimates) * 1e6,
            _median(self.wall.reported) * 1e6,
            self.wall.describe(),
            self._describe_batches(),
            why,
            agreement.value,
        )
        return agreement

    def _describe_batches(self) -> str:
        spans = sorted(self.host_spans) or [0.0]
        return (
            f"{len(self.sets)} samples per batch, covering spin {self.spin_s * 1e6:.0f} µs, "
            f"{self.uncovered_samples} of {len(self.host_spans)} samples uncovered, host span median "
            f"{_median(spans) * 1e6:.0f} µs, p90 {spans[(9 * len(spans)) // 10] * 1e6:.0f} µs"
        )

    # --- batches ---

    def _run_batch(self) -> None:
        # Each batch of the launcher follows GPU work of the judge (drawing the inputs, or verifying the outputs),
        # so both kinds pay the same switch between the two processes' contexts.
        batch = self._solution_batch()
        self._note_waiting(batch.readings)
        kept = [self._kept(r) for r in batch.readings]
        uncovered = sum(_uncovered(r) for r in batch.readings)
        self.uncovered_samples += uncovered
        self.host_spans += [r.host_span_s for r in batch.readings]
        if self.trials:
            self.call_spans += [r.call_s for r in batch.readings]
        if self.sensors is not None and self.sensors.throttled():
            kept = [None] * len(kept)
        if self.trials and self.method.checks_readings:
            calibration = self._calibration_batch()
            known = in_batch = 0.0
            if self.method.calibration_check:
                read = _median([r.elapsed_s for r in calibration.readings])
                if self.method.on_gpu:
                    known = in_batch = self._own_spin_seconds(self.known_cycles, repeat=3)
                else:
                    # The judge's fastest run of the known work is a floor: in the launcher's process it runs longer
                    # (an honest n=7 vector add read -18.8 µs on the clock with the floor alone). The reading, never
                    # below that floor, is what the calibration call took; a reading cut short only lowers it to the
                    # floor, and one stretched only adds to the solution's estimate.
                    known = self._own_work_seconds(self.known_cycles)
                    in_batch = max(read, known)
                self.calibration.append((read, known))
            self.wall.add(batch.wall_s, calibration.wall_s, in_batch, batch.readings, self.spin_s)
        self.pending.extend(kept)
        # A lone late sample (a pause of the host) is only dropped. Only when many are late does the spin grow, so
        # that one hiccup does not lengthen every later sample; the spin is the same for a batch and its
        # calibration batch, which the wall-clock check needs.
        spans = [r.host_span_s for r in batch.readings]
        if self.counts_host:
            return  # no spin covers a call that waits, nor is one wanted for a host-bound call: the harness's stays
        if uncovered * UNCOVERED_GROWTH_FRACTION[1] > len(kept) * UNCOVERED_GROWTH_FRACTION[0]:
            self.spin_s = max(self.spin_s, covering_spin_s(_upper_quartile(spans)))
            self.spin_s = min(2 * self.spin_s, MAX_SPIN_S)
        elif uncovered == 0 and self.method.covering_spin:
            # Shrink, at most by half per batch, towards what the host needs: the wall clock's error grows with
            # the spin (a clock a fraction of a per cent off over a long spin is microseconds per sample).
            self.spin_s = min(self.spin_s, max(covering_spin_s(_upper_quartile(spans)), self.spin_s / 2))

    def _solution_batch(self) -> Batch:
        """Draw every set afresh, time one solution sample on each, then check every one of them: its output,
        its snapshot and the modes; and the batch's threads."""
        for k in self.sets:
            self.buffers.draw_next(k, self.seed, self.index)
        self._sync()
        batch = self.link.time(
            self.sets, "solution", self._spin_cycles(), 0, self.method.name, timeout_s=self._batch_timeout_s()
        )
        self._check_sum(batch)
        for k, reading in zip(self.sets, batch.readings, strict=True):
            self.verify(k)
            if not self.buffers.snapshots_match(k):
                raise IntegrityError(
                    f"On case {self.case_name} the output changed after the stop event: work was still running "
                    "when the timer stopped (a side stream, a host thread or a deferred launch). Do all work on "
                    "the default stream before `solution` returns."
                )
            if reading.modes:
                raise IntegrityError(
                    "The solution left a torch function or dispatch mode active after it returned. Exit every "
                    "mode before returning."
                )
        if self.trials and batch.threads_after > batch.threads_before and not self._threads_settle(batch):
            raise IntegrityError(
                f"The solution left {batch.threads_after - batch.threads_before} host thread(s) running after it "
                "returned. Join every thread before returning."
            )
        self._sync()
        return batch

    def _batch_timeout_s(self) -> float:
        if self.call_estimate_s is None:
            return FIRST_BATCH_TIMEOUT_S
        per_call = BATCH_TIMEOUT_SLACK * self.call_estimate_s + self.spin_s
        return BATCH_TIMEOUT_BASE_S + len(self.sets) * per_call

    def _threads_settle(self, batch: Batch) -> bool:
        """Whether the extra threads were only still exiting: `Thread.join()` returns before the kernel has
        removed the thread, and on a busy host it lingers (an honest joined thread was rejected). A thread that
        goes on working stays; its writes after STOP are the snapshots' business, this only counts it."""
        deadline = time.monotonic() + THREAD_SETTLE_S
        while time.monotonic() < deadline:
            if self.link.threads() <= batch.threads_before:
                return True
            time.sleep(THREAD_SETTLE_POLL_S)
        return False

    def _calibration_batch(self) -> Batch:
        """The same samples with the known spin (the empty call on the CPU) in the solution's place."""
        known = self.known_cycles if self.method.calibration_check else 0
        batch = self.link.time(self.sets, "spin", self._spin_cycles(), known, self.method.name)
        self._check_sum(batch)
        return batch

    def _note_waiting(self, readings: list[Reading]) -> None:
        """Count batches that show a call waiting for the GPU; switch to timing it with its wait included."""
        if not self.method.covering_spin or self.counts_host:
            return
        waiting = bool(readings) and all(_uncovered(r) and r.start_passed for r in readings)
        self.waiting_batches = self.waiting_batches + 1 if waiting else 0
        if self.waiting_batches >= WAITING_EVIDENCE_BATCHES:
            self.host_waits = True
            self.spin_s = self.harness_spin_s

    def _kept(self, reading: Reading) -> float | None:
        if _uncovered(reading) and not self.counts_host:
            return None
        # Never below half the raw reading: the correction is small next to any real kernel.
        return max(reading.elapsed_s - self.overhead_s, reading.elapsed_s / 2)

    def _check_sum(self, batch: Batch) -> None:
        reported, wall = sum(r.elapsed_s for r in batch.readings), batch.wall_s
        if reported > wall:
            raise IntegrityError(
                f"The reported times ({reported * 1e6:.1f} µs in all) were longer than the whole batch took on the "
                f"runner's clock ({wall * 1e6:.1f} µs)."
            )

    def _spin_cycles(self) -> int:
        return int(self.spin_s * self.cycles_per_s) if self.method.covering_spin else 0

    # --- the judge's own GPU measurements ---

    def _sync(self) -> None:
        if self.method.on_gpu:
            import torch

            torch.cuda.synchronize()

    def _event_overhead(self) -> float:
        """The empty kernel's median under the launcher's protocol minus its ncu duration on this GPU model."""
        if self.device_name not in EMPTY_KERNEL_NCU_US:
            return 0.0  # nothing to subtract: no need to time the empty kernel
        # Empty samples take no time, so they fill every set however few the case's batches use: a case timed one
        # sample at a time paid 32 round trips here.
        sets = list(range(min(len(self.buffers.sets), EMPTY_SAMPLES)))
        empty: list[float] = []
        while len(empty) < EMPTY_SAMPLES:
            batch = self.link.time(sets, "spin", self._spin_cycles(), 0, self.method.name)
            empty += [r.elapsed_s for r in batch.readings]
        return event_overhead_s(_median(empty), self.device_name)

    def _measure_known_spin(self, target_s: float) -> None:
        """Find this GPU's spin rate with the judge's own events, then the duration of the known spin."""
        probe = 200_000
        rate = probe / self._own_spin_seconds(probe)
        self.cycles_per_s = rate
        self.known_cycles = max(int(target_s * rate), 1)
        self.known_s = self._own_spin_seconds(self.known_cycles)

    def _measure_known_work(self, target_s: float) -> None:
        """The CPU's counterpart: the rate of the known work in this process, then the duration of the known work."""
        probe = 200_000
        rate = probe / self._own_work_seconds(probe)
        self.known_cycles = max(int(target_s * rate), 1)
        self.known_s = self._own_work_seconds(self.known_cycles)

    def _own_work_seconds(self, units: int) -> float:
        """The fastest of a few runs of the known work in the judge's own process."""
        times = []
        for _ in range(KNOWN_WORK_REPEATS):
            start = time.perf_counter()
            known_work(units)
            times.append(time.perf_counter() - start)
        return min(times)

    def _own_spin_seconds(self, cycles: int, repeat: int = 5) -> float:
        """A spin's duration under the launcher's protocol: a covering spin first, so that the launch latency of
        the measured one is hidden, as it is in the launcher."""
        import torch

        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeat):
            torch.cuda.synchronize()
            torch.cuda._sleep(int(self.spin_s * self.cycles_per_s))
            start.record()
            torch.cuda._sleep(cycles)
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        return statistics.median(times)
