"""What sets one timing method apart from another, as data: the judge, the launcher and the measurement loop ask
a `TimingMethod` these questions instead of comparing its name.

A method is a name that travels in `MeasureConfig.method`, in `CaseTiming.method` and, between the judge and the
launcher, in the `time` message's `protocol` field; everything else about it is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from runner.timing.criteria import StoppingCriterion, criterion_named

if TYPE_CHECKING:
    from contract.wire import MeasureConfig

Device = Literal["gpu", "cpu"]
# (relative, absolute): a bound of max(relative · estimate, absolute) seconds.
Tolerance = tuple[float, float]


@dataclass(frozen=True)
class TimingMethod:
    """One way of timing a case. Each field answers one question the runner asks while it measures."""

    name: str
    # The kind of runner the method times on. A job asking for a method of the other kind gets that kind's
    # default method (runner.timing.methods.method_for).
    device: Device
    # The stopping criterion, by its registered name (runner.timing.criteria), and the MeasureConfig fields it is
    # built from: each is passed to the criterion under the field's own name.
    criterion: str
    criterion_params: tuple[str, ...]
    # The least value of a criterion parameter on this method, whatever the config asks: a target finer than the
    # method's clock can hold from one run to the next only buys samples.
    criterion_floors: tuple[tuple[str, float], ...]
    # Launcher, before START: a read of 4x L2 (the persisting-L2 carve-out reset for the case as well), so every
    # sample starts from a cold cache.
    flushes_l2: bool
    # Launcher, before START: event A and a spin kernel that keeps the GPU busy while the host enqueues the
    # sample, so host launch latency never lands between the events. A sample whose spin did not cover the host
    # is dropped, the spin is sized and resized from the host's spans, and a call that waits for the GPU inside
    # is detected by it.
    covering_spin: bool
    # Launcher: synchronise the device before each sample (the seed's loop).
    syncs_before_sample: bool
    # Judge: with each batch a batch of calibration samples in which a spin of a duration the judge measured
    # itself replaces the solution (on the CPU, known work: runner.timing.calibration.known_work); their median
    # must read that duration (on the CPU, not read shorter: a loaded host only lengthens it).
    calibration_check: bool
    # Judge: the wall-clock check, and its tolerance (None: no check). Readings may fall short of the judge's
    # own clock's estimate of one sample by at most max(relative · estimate, absolute).
    wall_tolerance: Tolerance | None
    # Judge, wall-clock check: readings under this fraction of the estimate, short by more than this many seconds,
    # are rejected whatever the tolerance says (None: no such rule).
    gross_shortfall: Tolerance | None
    # Judge: subtract the event pair's fixed cost, measured on the empty kernel against the GPU model's ncu
    # reference (runner.timing.calibration).
    event_overhead_correction: bool
    # Input sets per case: a fixed number, or None for MeasureConfig.input_sets (memory permitting).
    input_sets: int | None
    # Launcher, once before the first case: the seed's warm-up (ten 5000x5000 matmuls) when
    # MeasureConfig.warmup asks for it.
    seed_warmup: bool
    # Judge: a batch holds as many samples as fit this much call time (at most one per input set). Each sample of a
    # batch costs a fresh draw and a full check of its output, and each checked batch a calibration batch as
    # long, so the budget sets how long a case takes; the wall-clock check's resolution per call is the host's
    # jitter per batch divided by the batch's samples.
    batch_budget_s: float

    @property
    def on_gpu(self) -> bool:
        return self.device == "gpu"

    @property
    def wall_clock_check(self) -> bool:
        return self.wall_tolerance is not None

    @property
    def checks_readings(self) -> bool:
        """Whether the judge takes calibration batches beside the solution's (for either check)."""
        return self.calibration_check or self.wall_clock_check

    def make_criterion(self, config: MeasureConfig) -> StoppingCriterion:
        """A fresh stopping criterion for one case, with its parameters from `config`, none under its floor."""
        params = {field: getattr(config, field) for field in self.criterion_params}
        for field, floor in self.criterion_floors:
            params[field] = max(params[field], floor)
        return criterion_named(self.criterion, **params)

    def sets_for(self, config: MeasureConfig) -> int:
        """How many input sets a case may use (the judge still caps this by memory)."""
        return config.input_sets if self.input_sets is None else self.input_sets

    def configure(self, config: MeasureConfig) -> MeasureConfig:
        """`config` as this method runs it: the method's name, and its fixed number of input sets if it has one."""
        update: dict[str, object] = {"method": self.name}
        if self.input_sets is not None:
            update["input_sets"] = self.input_sets
        return config.model_copy(update=update)
