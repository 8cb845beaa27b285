"""The judge's rules for honest code that looks unusual: a call that waits for the GPU, a host under load.

These drive `JudgedTimer` and `WallClock` with readings shaped like those the launcher sends, so each rule is
checked on its own; the honest corpus (tests/honest) and the adversarial suite run them end to end.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from runner.errors import HostTooNoisyError, IntegrityError
from runner.judge import host_load
from runner.judge.judged_timer import RECHECK_BATCHES, WAITING_EVIDENCE_BATCHES, JudgedTimer, WallClock
from runner.judge.launcher_link import Reading
from runner.timing.methods.arena import ARENA


def _timer() -> JudgedTimer:
    return JudgedTimer(link=None, buffers=None, verify=lambda _k: None, method=ARENA, seed=1, index=0)  # type: ignore[arg-type]


def _reading(*, covered: float, span: float, passed: bool, elapsed: float = 10e-6) -> Reading:
    return Reading(
        elapsed_s=elapsed, covered_s=covered, host_span_s=span, modes=0, call_s=span / 2, start_passed=passed
    )


def test_a_call_that_waits_for_the_gpu_is_kept_after_the_evidence_batches() -> None:
    timer = _timer()
    waiting = [_reading(covered=20e-6, span=200e-6, passed=True) for _ in range(4)]
    assert timer._kept(waiting[0]) is None  # one uncovered sample alone is only dropped
    for _ in range(WAITING_EVIDENCE_BATCHES):
        timer._note_waiting(waiting)
    assert timer.host_waits
    assert timer._kept(waiting[0]) == pytest.approx(10e-6)


def test_a_slow_host_that_the_spin_covers_again_does_not_switch_modes() -> None:
    timer = _timer()
    timer._note_waiting([_reading(covered=20e-6, span=200e-6, passed=True)] * 3)
    timer._note_waiting([_reading(covered=400e-6, span=200e-6, passed=False)] * 3)  # covered: the count restarts
    timer._note_waiting([_reading(covered=20e-6, span=200e-6, passed=True)] * 3)
    assert not timer.host_waits


def test_uncovered_samples_where_the_gpu_had_not_reached_start_are_not_taken_for_waiting() -> None:
    timer = _timer()
    for _ in range(WAITING_EVIDENCE_BATCHES + 2):
        timer._note_waiting([_reading(covered=20e-6, span=200e-6, passed=False)] * 3)
    assert not timer.host_waits


def _wall(solution: list[float], calibration: list[float], reported: float) -> WallClock:
    wall = WallClock()
    readings = [Reading(elapsed_s=reported, covered_s=None, host_span_s=reported, modes=0)] * 10
    for s, c in zip(solution, calibration, strict=True):
        wall.add(s * 10, c * 10, 0.0, readings, 0.0)
    return wall


def test_the_best_case_estimate_discounts_batches_the_host_paused() -> None:
    # Honest: 10 µs calls, 30 µs of harness per sample; most batches caught a scheduler pause in the solution half.
    clock = _wall([140e-6, 150e-6, 40e-6, 160e-6, 145e-6], [30e-6, 31e-6, 30e-6, 33e-6, 30e-6], reported=10e-6)
    assert clock.shortfall() > 100e-6
    assert clock.best_case_shortfall() < 5e-6


def test_the_best_case_estimate_still_sees_shrunken_readings() -> None:
    # A launcher that reports a tenth of 100 µs calls, on a quiet host.
    clock = _wall([130e-6, 131e-6, 130e-6, 132e-6, 130e-6], [30e-6, 30e-6, 31e-6, 30e-6, 30e-6], reported=10e-6)
    assert clock.best_case_shortfall() > 80e-6


def test_cpu_pressure_reads_the_stall_between_readings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pressure_file = tmp_path / "cpu"
    pressure_file.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\nfull avg10=0 total=0\n")
    monkeypatch.setattr(host_load, "PRESSURE_FILE", str(pressure_file))
    clock = iter([100.0, 102.0])
    monkeypatch.setattr(host_load.time, "monotonic", lambda: next(clock))
    pressure = host_load.CpuPressure()
    pressure.start()
    pressure_file.write_text("some avg10=50.00 avg60=0.00 avg300=0.00 total=2000000\nfull avg10=0 total=0\n")
    assert pressure.busy_fraction() == pytest.approx(0.5)


def test_cpu_pressure_falls_back_to_the_load_average(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("8.00 4.00 2.00 5/300 1234\n")
    monkeypatch.setattr(host_load, "PRESSURE_FILE", str(tmp_path / "missing"))
    monkeypatch.setattr(host_load, "LOADAVG_FILE", str(loadavg))
    monkeypatch.setattr(host_load.os, "cpu_count", lambda: 2)
    pressure = host_load.CpuPressure()
    pressure.start()
    assert pressure.busy()


@pytest.fixture
def quiet_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pressure figures of a host where no task waited for a CPU, whatever this machine is doing."""
    pressure_file = tmp_path / "cpu"
    pressure_file.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\nfull avg10=0 total=0\n")
    monkeypatch.setattr(host_load, "PRESSURE_FILE", str(pressure_file))


def _checked_cpu_timer(clock: WallClock) -> JudgedTimer:
    """A CPU-method timer whose checked batches are `clock` (no launcher: the batches are all taken)."""
    from runner.timing.methods.cpu import CPU

    buffers = SimpleNamespace(case={"name": "m=1024,k=1024"}, sets=[None] * 3)  # what the messages read
    timer = JudgedTimer(link=None, buffers=buffers, verify=lambda _k: None, method=CPU, seed=1, index=0)  # type: ignore[arg-type]
    timer.wall = clock
    timer.pressure.start()
    return timer


@pytest.mark.usefixtures("quiet_host")
def test_a_moderate_cpu_shortfall_asks_for_a_rerun_and_accuses_no_one() -> None:
    # As seen on a 2-core virtual machine with an honest torch.mv: 340 µs reported against 510 µs on the clock,
    # every batch alike (no pause to discount), and the host not busy by its pressure figures.
    clock = _wall([660e-6] * RECHECK_BATCHES, [150e-6] * RECHECK_BATCHES, reported=340e-6)
    with pytest.raises(HostTooNoisyError, match="its host's own work around each call"):
        _checked_cpu_timer(clock).check()


@pytest.mark.usefixtures("quiet_host")
def test_a_gross_cpu_shortfall_is_still_an_integrity_failure() -> None:
    # Readings at a twentieth of the clock's estimate: more than any harness work or pause explains.
    clock = _wall([660e-6] * RECHECK_BATCHES, [150e-6] * RECHECK_BATCHES, reported=25e-6)
    with pytest.raises(IntegrityError, match="clock"):
        _checked_cpu_timer(clock).check()
