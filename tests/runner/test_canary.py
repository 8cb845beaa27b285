"""Canary measurements: the CPU set runs for real through `measure_canaries` on the CPU slot, the GPU set on a GPU
(marked `gpu`), and a child that fails, hangs or prints nonsense becomes a CanaryError that says so."""

from __future__ import annotations

import math
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runner.daemon.canary import CanaryError, measure_canaries, report_from_output
from runner.daemon.canary_kernels import CPU_SAMPLES, GPU_SAMPLES, SET_VERSION, median_rse
from runner.daemon.slots import cpu_slot, gpu_slots
from runner.host.devices import Slot, query_gpus
from runner.timing.criteria import MedianRelativeError

CPU_SET = {"matmul_fp32_512", "memcpy_16MiB", "python_loop_20k"}
GPU_SET = {"add_fp32_2^24", "matmul_fp16_4096", "matmul_fp32_2048", "copy_2^26_bytes"}
# A GPU slot whose child sees no GPU: the set exits 2 on every machine, a GPU machine too.
BLIND_GPU_SLOT = Slot(0, "NVIDIA H100 80GB HBM3", True, {"CUDA_VISIBLE_DEVICES": ""}, (9, 0))


async def test_the_cpu_set_runs_on_the_cpu_slot_and_gives_positive_medians() -> None:
    before = datetime.now(UTC)
    report = await measure_canaries(cpu_slot(), sys.executable)
    assert (report.device, report.gpu_type, report.set_version) == ("cpu", "cpu", SET_VERSION)
    assert {t.name for t in report.timings} == CPU_SET
    for timing in report.timings:
        assert timing.median_us > 0, timing
        assert math.isfinite(timing.rse), timing
        assert timing.samples == CPU_SAMPLES
    assert report.sm_clock_mhz is None
    assert before <= report.measured_at <= datetime.now(UTC) + timedelta(seconds=1)


async def test_a_child_that_sees_no_gpu_raises_with_its_message() -> None:
    with pytest.raises(CanaryError, match=r"exited with status 2: .*no CUDA device is visible"):
        await measure_canaries(BLIND_GPU_SLOT, sys.executable)


async def test_a_child_past_its_deadline_is_killed_and_raises() -> None:
    with pytest.raises(CanaryError, match="took over 0 s and were killed"):
        await measure_canaries(cpu_slot(), sys.executable, timeout_s=0.05)


async def test_an_interpreter_that_does_not_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(CanaryError, match="could not start"):
        await measure_canaries(cpu_slot(), str(tmp_path / "no-python"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Traceback (most recent call last):", "printed no valid report"),
        ('{"set_version": 1, "device": "cpu", "timings": []}', "printed no valid report"),
        (
            '{"set_version": 1, "device": "cpu", "timings": [{"name": "x", "median_us": -3, "rse": 0, "samples": 1}]}',
            "printed no valid report",
        ),
        (
            '{"set_version": 1, "device": "gpu", "timings": [{"name": "x", "median_us": 3, "rse": 0, "samples": 1}]}',
            "ran on 'gpu', not on the slot's cpu",
        ),
    ],
    ids=["garbage", "no-timings", "negative-median", "wrong-device"],
)
def test_a_report_that_does_not_fit_raises(line: str, message: str) -> None:
    with pytest.raises(CanaryError, match=message):
        report_from_output(line, cpu_slot())


def test_the_sets_rse_of_the_median_is_the_timing_loops() -> None:
    # canary_kernels imports nothing of the runner, so it keeps its own copy of the median-rse formula.
    rng = random.Random(7)
    samples = [100 + rng.expovariate(0.2) for _ in range(37)]
    criterion = MedianRelativeError()
    for sample in samples:
        criterion.add(sample)
    assert median_rse(samples) == pytest.approx(criterion.rse())
    assert median_rse(samples[:9]) == math.inf


@pytest.mark.gpu
async def test_the_gpu_set_runs_on_a_gpu_slot() -> None:
    slot = gpu_slots(query_gpus(), None)[0]
    report = await measure_canaries(slot, sys.executable)
    assert (report.device, report.gpu_type, report.set_version) == ("gpu", slot.gpu_type, SET_VERSION)
    assert {t.name for t in report.timings} == GPU_SET
    for timing in report.timings:
        assert timing.median_us > 0, timing
        # An idle GPU repeats these kernels within a few per cent; 5 % would mean the samples are disturbed.
        assert timing.rse < 0.05, timing
        assert timing.samples == GPU_SAMPLES
    assert report.sm_clock_mhz is not None and report.sm_clock_mhz > 0
