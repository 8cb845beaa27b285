"""How the judge sizes its batches: from the timing method's budget, and the empty-kernel samples in one request.

`JudgedTimer.calibrate` is driven by a link that answers every `time` request with readings of a fixed length,
so the sizes it settles on, and the requests it makes, can be read off without a launcher or a GPU.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from runner.judge.judged_timer import EMPTY_SAMPLES, JudgedTimer
from runner.judge.launcher_link import Batch, Reading
from runner.timing.calibration import EMPTY_KERNEL_NCU_US
from runner.timing.methods.arena import ARENA
from runner.timing.methods.base import TimingMethod
from runner.timing.methods.cpu import CPU


class FixedLink:
    """Answers each `time` request with one reading per set: `call_s` for the solution, 2 µs for a spin."""

    def __init__(self, call_s: float) -> None:
        self.call_s = call_s
        self.requests: list[tuple[str, int]] = []

    def time(self, sets: list[int], kind: str, *_args: object, **_kwargs: object) -> Batch:
        self.requests.append((kind, len(sets)))
        elapsed = self.call_s if kind == "solution" else 2e-6
        readings = [Reading(elapsed_s=elapsed, covered_s=1.0, host_span_s=20e-6, modes=0) for _ in sets]
        return Batch(readings, threads_before=1, threads_after=1, wall_s=len(sets) * (elapsed + 1e-4))


def _calibrated(
    method: TimingMethod, call_s: float, sets: int = 64, device_name: str = ""
) -> tuple[JudgedTimer, FixedLink]:
    # The host-side variant of each method: no CUDA synchronisation and no known-spin measurement, which need a GPU.
    method = dataclasses.replace(method, device="cpu", calibration_check=False)
    link = FixedLink(call_s)
    buffers = SimpleNamespace(
        case={"name": "n=1"}, sets=[None] * sets, draw_next=lambda *_a: None, snapshots_match=lambda _k: True
    )
    timer = JudgedTimer(
        link=link,  # type: ignore[arg-type]
        buffers=buffers,  # type: ignore[arg-type]
        verify=lambda _k: None,
        method=method,
        seed=1,
        index=0,
        device_name=device_name,
    )
    timer.calibrate(None)
    return timer, link


@pytest.mark.parametrize(("method", "call_s", "size"), [(ARENA, 1e-3, 5), (CPU, 1e-3, 20), (ARENA, 200e-6, 25)])
def test_a_batch_holds_as_many_calls_as_fit_the_methods_budget(method: TimingMethod, call_s: float, size: int) -> None:
    timer, _ = _calibrated(method, call_s)
    assert timer.batch_size == size
    assert len(timer.sets) == size


def test_a_batch_never_holds_more_calls_than_the_case_has_input_sets() -> None:
    timer, _ = _calibrated(ARENA, 1e-6, sets=12)
    assert len(timer.sets) == 12


def test_a_call_longer_than_the_budget_is_timed_one_sample_per_batch() -> None:
    timer, link = _calibrated(ARENA, 40e-3)
    assert timer.batch_size == 1
    assert link.requests[0] == ("solution", 1)  # a slow first sample: no second warm-up batch


def test_the_empty_kernel_is_timed_in_one_request_even_when_batches_hold_one_sample() -> None:
    device = next(iter(EMPTY_KERNEL_NCU_US))  # a model with an ncu reference: the correction is measured
    timer, link = _calibrated(ARENA, 40e-3, device_name=device)
    spins = [count for kind, count in link.requests if kind == "spin"]
    assert spins == [EMPTY_SAMPLES]
    assert timer.batch_size == 1


def test_the_empty_kernel_uses_every_set_a_small_case_has() -> None:
    device = next(iter(EMPTY_KERNEL_NCU_US))
    _, link = _calibrated(ARENA, 40e-3, sets=10, device_name=device)
    spins = [count for kind, count in link.requests if kind == "spin"]
    assert spins == [10, 10, 10, 10]  # 40 samples of 10 sets: at least EMPTY_SAMPLES
