"""Peak rates measured on a slot's GPU, once per GPU and torch version: the host's side of the peak probe.

The daemon never imports torch, so the measurement runs in a child process (`runner.judge.peak_probe`) that
sees only the slot's GPU. Its answer is kept in memory and on disk (`<cache_dir>/peaks/<key>.json`), keyed by
the GPU's name, the slot's CUDA_VISIBLE_DEVICES and the torch version, so a restart does not measure again.
Any failure gives None, and the caller falls back to the datasheet figures of `runner.gpus`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import os
import signal
import tempfile
from pathlib import Path

from contract.wire import MeasuredPeaks
from runner.host.devices import Slot, package_version

log = logging.getLogger(__name__)

PROBE_MODULE = "runner.judge.peak_probe"
# The directory holding the `runner` package: the probe's cwd and PYTHONPATH, so `-m runner...` resolves.
REPO_ROOT = Path(__file__).resolve().parents[2]
KEY_CHARS = 16
STDERR_TAIL_CHARS = 2000

_measured: dict[str, MeasuredPeaks] = {}
# A GPU whose probe failed is not probed again by this process: every job would otherwise pay for a probe that
# may hang for `timeout_s`. A restart tries again.
_failed: set[str] = set()
_locks: dict[str, asyncio.Lock] = {}


def forget_cached_peaks() -> None:
    """Drop the in-memory cache and the failures (the disk cache stays). Call it only while no measurement runs."""
    _measured.clear()
    _failed.clear()
    _locks.clear()


def peaks_key(slot: Slot, python: str = "") -> str:
    """A short digest of what the peaks depend on: the GPU model, which GPU the slot sees, the interpreter that
    measures (its environment's torch and cuBLAS) and the daemon's torch version (changed by an upgrade)."""
    parts = (slot.name, slot.env.get("CUDA_VISIBLE_DEVICES", ""), python, package_version("torch") or "none")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:KEY_CHARS]


async def device_peaks(
    python: str, slot: Slot, cache_dir: Path | None, *, timeout_s: float = 180.0
) -> MeasuredPeaks | None:
    """The slot's measured peaks: from memory, else from `cache_dir`, else from running the probe with `python`.

    None for a CPU slot, and when the probe fails: the failure is logged, nothing is written to disk, and this
    process does not probe that GPU again. Concurrent calls for the same GPU share one measurement.
    """
    if not slot.is_gpu:
        return None
    key = peaks_key(slot, python)
    async with _locks.setdefault(key, asyncio.Lock()):
        if key in _measured or key in _failed:
            return _measured.get(key)
        path = cache_dir / "peaks" / f"{key}.json" if cache_dir is not None else None
        peaks = await asyncio.to_thread(_read_cached, path, slot) if path is not None else None
        if peaks is None:
            peaks = await _run_probe(python, slot, timeout_s)
            if peaks is None:
                _failed.add(key)
                return None
            if path is not None:
                await asyncio.to_thread(_write_cached, path, peaks)
        _measured[key] = peaks
        return peaks


def _checked(peaks: MeasuredPeaks, slot: Slot) -> MeasuredPeaks | None:
    """`peaks` if every rate is finite and positive, else None. A device name that does not match the slot's is
    only logged: torch and nvidia-smi may spell a name differently, and the rates are still this GPU's."""
    rates = [peaks.bandwidth_gbps, *peaks.ceiling_gflops.values()]
    if not peaks.ceiling_gflops or not all(math.isfinite(r) and r > 0 for r in rates):
        log.warning("peaks for %s are not all positive and finite: %s", slot.name, peaks.model_dump_json())
        return None
    if slot.name not in peaks.device and peaks.device not in slot.name:
        log.warning("peaks measured on %r, but slot %d is %r; using them anyway", peaks.device, slot.index, slot.name)
    return peaks


def _read_cached(path: Path, slot: Slot) -> MeasuredPeaks | None:
    try:
        peaks = MeasuredPeaks.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        log.warning("ignoring the unreadable peaks cache %s, measuring again: %s", path, exc)
        return None
    return _checked(peaks, slot)


def _write_cached(path: Path, peaks: MeasuredPeaks) -> None:
    """Write atomically (temporary file + rename), so a reader never sees half a file. Failure is only logged."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(peaks.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.warning("could not write the peaks cache %s: %s", path, exc)


async def _run_probe(python: str, slot: Slot, timeout_s: float) -> MeasuredPeaks | None:
    env = {**os.environ, **slot.env}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    log.info("measuring the peaks of slot %d (%s) with %s -m %s", slot.index, slot.name, python, PROBE_MODULE)
    try:
        # Its own session, so that a timeout kills the probe's whole process group.
        proc = await asyncio.create_subprocess_exec(
            python,
            "-m",
            PROBE_MODULE,
            cwd=REPO_ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("could not start the peak probe for %s: %s", slot.name, exc)
        return None
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        log.warning("the peak probe for %s took over %.0f s; killed", slot.name, timeout_s)
        return None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    tail = stderr.decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]
    lines = stdout.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        log.warning("the peak probe for %s exited with %s: %s", slot.name, proc.returncode, tail)
        return None
    try:
        peaks = MeasuredPeaks.model_validate_json(lines[-1])
    except ValueError as exc:
        log.warning("the peak probe for %s printed no valid peaks (%s): %s", slot.name, exc, tail)
        return None
    return _checked(peaks, slot)
