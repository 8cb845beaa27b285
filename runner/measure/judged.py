"""The judge's timer: every sample is a request to the launcher, and counts only after the judge checked it.

Per sample (runner/harness.py has the launcher's side):
- the set's inputs get fresh values and its outputs NaN, in the judge's own memory and context;
- the launcher times one call and reports raw readings; the judge times the round trip with its own clock;
- the judge verifies every output element, requires the on-stream snapshot to equal the output bit for bit,
  requires no host thread left behind, and requires the reported time to fit inside its round trip.

Per case, with the `arena` protocol, calibration samples are interleaved with the solution's:
- a spin kernel of a duration the judge measured itself, timed by the launcher on its own;
- solution samples with the same spin added inside START..STOP, whose excess over plain samples must be
  the spin's duration;
- the judge's round trip minus the reported time, which must not exceed the calibration samples' by more
  than a bound.
A timer patched to scale, shift or zero what it reports disagrees with at least one of these.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from runner.case_buffers import CaseBuffers
from runner.errors import IntegrityError
from runner.launcher_link import LauncherLink, Reading
from runner.measure.calibration import EMPTY_KERNEL_NCU_US
from runner.measure.gpu import MAX_SPIN_S, SPIN_MARGIN_S, GpuSensors

CALIBRATION_EVERY = 8
MIN_CALIBRATION_SAMPLES = 4
# The event pair's launch overhead is about a microsecond on every GPU measured; a larger correction would
# let a launcher that inflates its empty-kernel reading shave real time off every sample.
MAX_EVENT_OVERHEAD_S = 3e-6
KNOWN_SPIN_MIN_S = 50e-6
KNOWN_SPIN_MAX_S = 5e-3
# Tolerances of the calibration checks: relative to the known spin, plus an absolute floor for jitter.
PURE_TOLERANCE = (0.10, 3e-6)
ADDED_TOLERANCE = (0.20, 5e-6)
# The wall-clock bound: how much more of the judge's round trip a solution sample may leave unexplained
# than a calibration sample does, relative to the solution's time, and at least. On the CPU the two
# processes share cores, and a woken judge can wait a scheduler slice or more; CPU runs are for development.
WALL_TOLERANCE = (0.5, 1e-3)
CPU_WALL_TOLERANCE = (1.0, 25e-3)

Verify = Callable[[int], None]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


@dataclass
class JudgedTimer:
    """A SampleTimer (runner.measure.measurement) whose calls are input-set indices."""

    link: LauncherLink
    buffers: CaseBuffers
    verify: Verify
    protocol: str  # "arena", "seed" or "cpu"
    seed: int
    index: int
    device_name: str = ""
    sensors: GpuSensors | None = None
    spin_s: float = 20e-6
    overhead_s: float = 0.0
    cycles_per_s: float = 2.0e9  # an upper bound on the SM clock until measured
    known_cycles: int = 0
    known_s: float = 0.0
    trials: bool = False
    samples: int = 0
    plain: list[float] = field(default_factory=list)
    added: list[float] = field(default_factory=list)
    spins: list[float] = field(default_factory=list)
    solution_gaps: list[float] = field(default_factory=list)
    calibration_gaps: list[float] = field(default_factory=list)

    @property
    def gpu(self) -> bool:
        return self.protocol != "cpu"

    # --- the SampleTimer interface ---

    def calibrate(self, k: int) -> None:
        """Size the spin from the host's enqueue time, measure the event overhead and set the known spin."""
        readings = [r for r in (self._solution(k, 0) for _ in range(3)) if r is not None]
        if self.protocol == "arena":
            worst = max((r.host_span_s for r in readings), default=self.spin_s)
            self.spin_s = min(max(1.5 * worst + SPIN_MARGIN_S, 20e-6), MAX_SPIN_S)
            self.overhead_s = self._event_overhead()
            estimate = _median([r.elapsed_s for r in readings])
            self._measure_known_spin(min(max(estimate, KNOWN_SPIN_MIN_S), KNOWN_SPIN_MAX_S))

    def start_trials(self) -> None:
        self.trials = True

    def __call__(self, k: int) -> float | None:
        if self.trials and self.samples % CALIBRATION_EVERY == 0:
            self._calibration_sample()
        if self.trials and self.protocol == "arena" and self.samples % CALIBRATION_EVERY == CALIBRATION_EVERY // 2:
            self._added_sample(k)
        self.samples += 1
        reading = self._solution(k, 0)
        if reading is None:
            return None
        if self.trials:
            self.plain.append(reading.elapsed_s)
            self.solution_gaps.append(self._gap(reading))
        # Never below half the raw reading: the correction is small next to any real kernel.
        return max(reading.elapsed_s - self.overhead_s, reading.elapsed_s / 2)

    # --- checks at the end of a case ---

    def check(self) -> None:
        """Raise IntegrityError when the launcher's readings disagree with the judge's calibration or clock."""
        if self.protocol == "seed" or not self.plain:
            return
        while len(self.calibration_gaps) < MIN_CALIBRATION_SAMPLES:
            self._calibration_sample()
        if self.protocol == "arena":
            while len(self.added) < MIN_CALIBRATION_SAMPLES:
                self._added_sample(self.samples % len(self.buffers.sets))
            self._check_known_spin()
        self._check_wall_clock()

    def _check_known_spin(self) -> None:
        known, plain = self.known_s, _median(self.plain)
        pure = _median(self.spins)
        if abs(pure - known) > PURE_TOLERANCE[0] * known + PURE_TOLERANCE[1]:
            raise IntegrityError(
                f"The timer disagreed with the calibration kernel on case {self.buffers.case['name']}: it reported "
                f"{pure * 1e6:.1f} µs for a kernel the runner measured at {known * 1e6:.1f} µs. Something in the "
                "solution's process changed how time is measured."
            )
        added = _median(self.added) - plain
        if abs(added - known) > ADDED_TOLERANCE[0] * known + ADDED_TOLERANCE[1]:
            raise IntegrityError(
                f"On case {self.buffers.case['name']}, adding a {known * 1e6:.1f} µs kernel to the timed window "
                f"changed the reported time by {added * 1e6:.1f} µs. The reported times do not follow the work "
                "done between the timing events."
            )

    def _check_wall_clock(self) -> None:
        excess = _median(self.solution_gaps) - _median(self.calibration_gaps)
        relative, least = WALL_TOLERANCE if self.gpu else CPU_WALL_TOLERANCE
        bound = max(relative * _median(self.plain), least)
        if excess > bound:
            raise IntegrityError(
                f"On case {self.buffers.case['name']}, each call took {excess * 1e3:.2f} ms more of the runner's own "
                f"clock than the reported {_median(self.plain) * 1e3:.3f} ms explains. Work was hidden from the "
                "timing events."
            )

    # --- samples ---

    def _solution(self, k: int, known_cycles: int) -> Reading | None:
        """One verified sample of set k; None when it must be dropped (spin too short, GPU throttled)."""
        self.buffers.draw_next(k, self.seed, self.index)
        self._sync()
        reading = self.link.time(k, "solution", self._spin_cycles(), known_cycles, self.protocol)
        self._check_reading(reading)
        self.verify(k)
        if not self.buffers.snapshots_match(k):
            raise IntegrityError(
                f"On case {self.buffers.case['name']} the output changed after the stop event: work was still "
                "running when the timer stopped (a side stream, a host thread or a deferred launch). Do all work "
                "on the default stream before `solution` returns."
            )
        if self.trials and reading.threads_after > reading.threads_before:
            raise IntegrityError(
                f"The solution left {reading.threads_after - reading.threads_before} host thread(s) running after "
                "it returned. Join every thread before returning."
            )
        if reading.covered_s is not None and reading.covered_s < reading.host_span_s:
            self.spin_s = min(2 * max(self.spin_s, reading.host_span_s), MAX_SPIN_S)
            return None
        if self.sensors is not None and self.sensors.throttled():
            return None
        return reading

    def _added_sample(self, k: int) -> None:
        reading = self._solution(k, self.known_cycles)
        if reading is not None:
            self.added.append(reading.elapsed_s)

    def _calibration_sample(self) -> None:
        """A sample with no solution call: the known spin on a GPU, an empty call on the CPU."""
        known = self.known_cycles if self.protocol == "arena" else 0
        reading = self.link.time(0, "spin", self._spin_cycles(), known, self.protocol)
        self._check_reading(reading)
        if self.protocol == "arena":
            self.spins.append(reading.elapsed_s)
        self.calibration_gaps.append(self._gap(reading))

    def _check_reading(self, reading: Reading) -> None:
        if reading.elapsed_s > reading.round_trip_s:
            raise IntegrityError(
                f"A reported time ({reading.elapsed_s * 1e6:.1f} µs) was longer than the whole request took on the "
                f"runner's clock ({reading.round_trip_s * 1e6:.1f} µs)."
            )

    def _gap(self, reading: Reading) -> float:
        """The part of the judge's round trip not covered by the reported time or the judge-sized spin."""
        spin = self._spin_cycles() / self.cycles_per_s if self.protocol == "arena" else 0.0
        return reading.round_trip_s - reading.elapsed_s - spin

    def _spin_cycles(self) -> int:
        return int(self.spin_s * self.cycles_per_s) if self.protocol == "arena" else 0

    # --- the judge's own GPU measurements ---

    def _sync(self) -> None:
        if self.gpu:
            import torch

            torch.cuda.synchronize()

    def _event_overhead(self) -> float:
        """The empty kernel's median under the launcher's protocol minus its ncu duration on this GPU model."""
        reference_us = EMPTY_KERNEL_NCU_US.get(self.device_name)
        if reference_us is None:
            return 0.0
        empty = [self.link.time(0, "spin", self._spin_cycles(), 0, self.protocol).elapsed_s for _ in range(32)]
        return min(max(_median(empty) - reference_us * 1e-6, 0.0), MAX_EVENT_OVERHEAD_S)

    def _measure_known_spin(self, target_s: float) -> None:
        """Find this GPU's spin rate with the judge's own events, then the duration of the known spin."""
        probe = 200_000
        rate = probe / self._own_spin_seconds(probe)
        self.cycles_per_s = rate
        self.known_cycles = max(int(target_s * rate), 1)
        self.known_s = self._own_spin_seconds(self.known_cycles)

    def _own_spin_seconds(self, cycles: int, repeat: int = 5) -> float:
        import torch

        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(repeat):
            torch.cuda.synchronize()
            start.record()
            torch.cuda._sleep(cycles)
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        return statistics.median(times)
