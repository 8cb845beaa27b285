"""Runs one job in a fresh worker process and streams its events back.

The caller (the CLI today, the daemon later) never imports torch or the submission: a crash, a hang or a
flood of output in the worker becomes an error result here, and the caller keeps going.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from runner.api import ErrorInfo, JobEvent, JobRequest, SubmissionResult
from runner.errors import trim_log

log = logging.getLogger(__name__)

MAX_CAPTURE_BYTES = 64 * 1024
DEFAULT_JOB_TIMEOUT_S = 900.0

EventCallback = Callable[[JobEvent], Awaitable[None] | None]


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> bytes:
    """Read a stream to its end, keeping only the first `limit` bytes, so output floods cost no memory."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept)


async def _read_events(reader: asyncio.StreamReader, on_event: EventCallback | None) -> SubmissionResult | None:
    result: SubmissionResult | None = None
    while line := await reader.readline():
        event = JobEvent.model_validate_json(line)
        if event.type == "done":
            result = event.result
        if on_event is not None:
            maybe = on_event(event)
            if maybe is not None:
                await maybe
    return result


def _failure(request: JobRequest, code: str, message: str, log_text: str) -> SubmissionResult:
    return SubmissionResult(
        submission_id=request.submission_id,
        problem_slug=request.problem_slug,
        problem_version=request.problem_version,
        dtype=request.dtype,
        language=request.language,
        mode=request.mode,
        status="error",
        device="unknown",
        error=ErrorInfo(code=code, message=message, log=trim_log(log_text) or None),  # type: ignore[arg-type]
    )


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


async def run_job(
    request: JobRequest,
    on_event: EventCallback | None = None,
    *,
    timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
    python: str = sys.executable,
) -> SubmissionResult:
    """Evaluate `request` in a fresh worker process; always returns a result, never raises for the job's faults."""
    with tempfile.TemporaryDirectory(prefix=f"arena-job-{request.submission_id[:16]}-") as tmp:
        workdir = Path(tmp)
        request_file = workdir / "request.json"
        request_file.write_text(request.model_dump_json(), encoding="utf-8")
        read_fd, write_fd = os.pipe()
        root = Path(__file__).resolve().parent.parent
        proc = await asyncio.create_subprocess_exec(
            python,
            "-m",
            "runner.worker",
            "--request",
            str(request_file),
            "--workdir",
            str(workdir),
            "--events-fd",
            str(write_fd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            pass_fds=(write_fd,),
            cwd=workdir,
            env={**os.environ, "PYTHONPATH": str(root), "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )
        os.close(write_fd)
        loop = asyncio.get_running_loop()
        events = asyncio.StreamReader(limit=16 * 1024 * 1024)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(events), os.fdopen(read_fd, "rb", buffering=0)
        )
        assert proc.stdout is not None
        output_task = asyncio.create_task(_read_capped(proc.stdout, MAX_CAPTURE_BYTES))
        try:
            async with asyncio.timeout(timeout_s):
                result = await _read_events(events, on_event)
                await proc.wait()
        except TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return _failure(request, "timeout", f"The job ran past its {timeout_s:.0f} s limit and was stopped.", "")
        finally:
            transport.close()
            _kill_group(proc.pid)
        output = (await output_task).decode("utf-8", "replace")
        if result is not None:
            return result
        message = f"The worker running your submission {_describe_exit(proc.returncode or 0)} before finishing."
        return _failure(request, "crashed", message, output)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
