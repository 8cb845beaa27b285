"""Measured peaks on the daemon side: the probe subprocess, its deadline, and the memory and disk caches.

The probe is replaced by a fake interpreter: a small executable script that ignores `-m runner.judge.peak_probe`,
records each run (arguments, the CUDA_VISIBLE_DEVICES it saw, its pid) and prints what the test asks for.
Everything else is the real code. The real probe runs in the `gpu` test and in the no-CUDA test.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from contract.wire import MeasuredPeaks
from runner.daemon.slots import cpu_slot, gpu_slots
from runner.host.device_peaks import REPO_ROOT, device_peaks, forget_cached_peaks, peaks_key
from runner.host.devices import Slot, query_gpus

PEAKS = MeasuredPeaks(
    device="NVIDIA H100 80GB HBM3",
    bandwidth_gbps=3000.0,
    ceiling_gflops={"float32": 400_000.0, "float16": 700_000.0, "bfloat16": 700_000.0},
    torch="2.13.0",
    measured_at=1.7e9,
)
H100_SLOT = Slot(0, "NVIDIA H100 80GB HBM3", True, {"CUDA_VISIBLE_DEVICES": "GPU-test-uuid"}, (9, 0))


@dataclass
class FakePython:
    path: Path
    log: Path

    def runs(self) -> list[list[str]]:
        """One entry per run: its arguments, then the CUDA_VISIBLE_DEVICES it saw, then its pid."""
        if not self.log.exists():
            return []
        return [line.split("\t") for line in self.log.read_text().splitlines()]


def fake_python(
    tmp_path: Path, stdout: str = PEAKS.model_dump_json() + "\n", *, exit_code: int = 0, sleep_s: float = 0.0
) -> FakePython:
    path, log = tmp_path / "fake-python", tmp_path / "runs.log"
    path.write_text(
        f"#!{sys.executable}\n"
        "import os, sys, time\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write('\\t'.join([' '.join(sys.argv[1:]), os.environ.get('CUDA_VISIBLE_DEVICES', '-'),"
        " str(os.getpid())]) + '\\n')\n"
        f"time.sleep({sleep_s})\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.exit({exit_code})\n"
    )
    path.chmod(0o755)
    return FakePython(path, log)


def cache_file(cache_dir: Path, slot: Slot = H100_SLOT, python: Path | None = None) -> Path:
    return cache_dir / "peaks" / f"{peaks_key(slot, str(python) if python else '')}.json"


@pytest.fixture(autouse=True)
def fresh_memory() -> None:
    forget_cached_peaks()


async def test_cpu_slot_gives_none_without_running_the_probe(tmp_path: Path) -> None:
    fake = fake_python(tmp_path)
    assert await device_peaks(str(fake.path), cpu_slot(), tmp_path / "cache") is None
    assert fake.runs() == []


async def test_probe_result_is_returned_and_written_to_the_disk_cache(tmp_path: Path) -> None:
    fake = fake_python(tmp_path)
    cache_dir = tmp_path / "cache"
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) == PEAKS
    [(args, visible, _pid)] = fake.runs()
    assert (args, visible) == ("-m runner.judge.peak_probe", "GPU-test-uuid")
    cached = cache_file(cache_dir, python=fake.path)
    assert MeasuredPeaks.model_validate_json(cached.read_text()) == PEAKS
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    assert [p.name for p in cached.parent.iterdir()] == [cached.name]


async def test_later_calls_use_memory_then_the_disk_cache_without_probing_again(tmp_path: Path) -> None:
    fake = fake_python(tmp_path)
    cache_dir = tmp_path / "cache"
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) == PEAKS
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) == PEAKS
    forget_cached_peaks()
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) == PEAKS
    assert len(fake.runs()) == 1


async def test_without_a_cache_dir_memory_still_serves_later_calls(tmp_path: Path) -> None:
    fake = fake_python(tmp_path)
    assert await device_peaks(str(fake.path), H100_SLOT, None) == PEAKS
    assert await device_peaks(str(fake.path), H100_SLOT, None) == PEAKS
    assert len(fake.runs()) == 1


@pytest.mark.parametrize(
    ("stdout", "exit_code"),
    [
        (PEAKS.model_dump_json() + "\n", 1),
        ("Traceback: CUDA error: out of memory\n", 0),
        ("", 0),
        (PEAKS.model_dump_json().replace("3000.0", "-1.0"), 0),
        (PEAKS.model_dump_json().replace("400000.0", "0.0"), 0),
    ],
    ids=["nonzero-exit", "garbage", "silent", "negative-bandwidth", "zero-ceiling"],
)
async def test_failing_probe_gives_none_writes_nothing_and_is_not_retried_until_a_restart(
    tmp_path: Path, stdout: str, exit_code: int
) -> None:
    fake = fake_python(tmp_path, stdout, exit_code=exit_code)
    cache_dir = tmp_path / "cache"
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) is None
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) is None
    assert len(fake.runs()) == 1
    assert not list(cache_dir.rglob("*"))
    forget_cached_peaks()  # what a restart does
    assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) is None
    assert len(fake.runs()) == 2


async def test_hanging_probe_is_killed_after_the_timeout(tmp_path: Path) -> None:
    fake = fake_python(tmp_path, sleep_s=60)
    assert await device_peaks(str(fake.path), H100_SLOT, tmp_path / "cache", timeout_s=1.0) is None
    [(_args, _visible, pid)] = fake.runs()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)
    assert not list((tmp_path / "cache").rglob("*"))


async def test_corrupt_cache_file_is_measured_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = fake_python(tmp_path)
    cache_dir = tmp_path / "cache"
    cache_file(cache_dir, python=fake.path).parent.mkdir(parents=True)
    cache_file(cache_dir, python=fake.path).write_text('{"device": "NVIDIA H100 80GB HBM3", "bandwid')
    with caplog.at_level(logging.WARNING, logger="runner.host.device_peaks"):
        assert await device_peaks(str(fake.path), H100_SLOT, cache_dir) == PEAKS
    assert "unreadable peaks cache" in caplog.text
    assert len(fake.runs()) == 1
    assert MeasuredPeaks.model_validate_json(cache_file(cache_dir, python=fake.path).read_text()) == PEAKS


async def test_concurrent_calls_run_the_probe_once(tmp_path: Path) -> None:
    fake = fake_python(tmp_path, sleep_s=0.5)
    cache_dir = tmp_path / "cache"
    results = await asyncio.gather(*(device_peaks(str(fake.path), H100_SLOT, cache_dir) for _ in range(2)))
    assert results == [PEAKS, PEAKS]
    assert len(fake.runs()) == 1


async def test_other_gpus_are_measured_separately(tmp_path: Path) -> None:
    fake = fake_python(tmp_path)
    other = Slot(1, H100_SLOT.name, True, {"CUDA_VISIBLE_DEVICES": "GPU-other-uuid"}, (9, 0))
    assert peaks_key(other) != peaks_key(H100_SLOT)
    assert await device_peaks(str(fake.path), H100_SLOT, tmp_path / "cache") == PEAKS
    assert await device_peaks(str(fake.path), other, tmp_path / "cache") == PEAKS
    assert [visible for _args, visible, _pid in fake.runs()] == ["GPU-test-uuid", "GPU-other-uuid"]


async def test_a_device_name_mismatch_is_logged_and_the_peaks_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_python(tmp_path)
    h200 = Slot(0, "NVIDIA H200", True, {"CUDA_VISIBLE_DEVICES": "GPU-test-uuid"}, (9, 0))
    with caplog.at_level(logging.WARNING, logger="runner.host.device_peaks"):
        assert await device_peaks(str(fake.path), h200, None) == PEAKS
    assert "NVIDIA H100 80GB HBM3" in caplog.text


def test_the_daemon_side_never_imports_torch() -> None:
    code = "import sys, runner.host.device_peaks; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=False).returncode == 0


def test_the_real_probe_exits_2_with_a_message_when_no_gpu_is_visible() -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    probe = subprocess.run(
        [sys.executable, "-m", "runner.judge.peak_probe"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (probe.returncode, probe.stdout) == (2, "")
    assert "no CUDA device is visible" in probe.stderr


@pytest.mark.gpu
async def test_the_real_probe_measures_this_gpu(tmp_path: Path) -> None:
    gpus = query_gpus()
    if not gpus:
        pytest.skip("nvidia-smi lists no GPU")
    slot = gpu_slots(gpus[:1], None)[0]
    peaks = await device_peaks(sys.executable, slot, tmp_path)
    assert peaks is not None
    assert peaks.bandwidth_gbps > 100
    assert peaks.ceiling_gflops["float16"] > peaks.ceiling_gflops["float32"]
    assert cache_file(tmp_path, slot, Path(sys.executable)).exists()
