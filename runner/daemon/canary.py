"""Canary measurements on the daemon side: run the canary set on one slot, in a child process, and read its report.

The daemon never imports torch, so the set (`runner.daemon.canary_kernels`) runs in a child process that sees
only the slot's device, as the peak probe does (`runner.host.device_peaks`). The runner measures when it joins
its pool and then periodically, and sends the report to the core, which judges it against the pool's
(`core/canary.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contract.wire import CanaryReport
from runner.host.devices import Slot

log = logging.getLogger(__name__)

CANARY_MODULE = "runner.daemon.canary_kernels"
# The directory holding the `runner` package: the child's cwd and PYTHONPATH, so `-m runner...` resolves.
REPO_ROOT = Path(__file__).resolve().parents[2]
STDERR_TAIL_CHARS = 2000


class CanaryError(RuntimeError):
    """The canary set could not be measured on a slot; the message says what happened and what to check."""


async def measure_canaries(slot: Slot, python: str, timeout_s: float = 120.0) -> CanaryReport:
    """Time the canary set on `slot` with the interpreter `python` (the one jobs use, with its torch).

    Raises CanaryError when the child cannot start, outlives `timeout_s` (its process group is killed), exits
    non-zero or prints no valid report.
    """
    device = "gpu" if slot.is_gpu else "cpu"
    env = {**os.environ, **slot.env}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    log.info("measuring the canaries of slot %d (%s) with %s -m %s", slot.index, slot.name, python, CANARY_MODULE)
    try:
        # Its own session, so that a timeout kills the child's whole process group (nvidia-smi included).
        proc = await asyncio.create_subprocess_exec(
            python,
            "-m",
            CANARY_MODULE,
            device,
            cwd=REPO_ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise CanaryError(f"could not start {python} for the canaries of {slot.name}: {exc}") from exc
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        raise CanaryError(
            f"the canaries of {slot.name} took over {timeout_s:.0f} s and were killed; a healthy "
            f"{device.upper()} runs the set in seconds, so check whether the device is stuck or shared"
        ) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    tail = stderr.decode("utf-8", "replace")[-STDERR_TAIL_CHARS:].strip()
    lines = stdout.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise CanaryError(f"the canaries of {slot.name} exited with status {proc.returncode}: {tail or 'no output'}")
    return report_from_output(lines[-1], slot)


def report_from_output(line: str, slot: Slot) -> CanaryReport:
    """The CanaryReport in one JSON line of `canary_kernels`, for `slot`, stamped now. Raises CanaryError."""
    try:
        printed: dict[str, Any] = json.loads(line)
        report = CanaryReport(
            device="gpu" if slot.is_gpu else "cpu",
            gpu_type=slot.gpu_type,
            set_version=printed["set_version"],
            timings=printed["timings"],
            sm_clock_mhz=printed.get("sm_clock_mhz"),
            measured_at=datetime.now(UTC),
        )
    except (ValueError, TypeError, KeyError, ValidationError) as exc:
        raise CanaryError(f"the canaries of {slot.name} printed no valid report ({exc}): {line[:500]}") from exc
    if printed.get("device") != report.device:
        raise CanaryError(
            f"the canaries of {slot.name} ran on {printed.get('device')!r}, not on the slot's {report.device}"
        )
    return report
