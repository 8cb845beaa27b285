"""One sandboxed process seen from the runner: a results pipe, captured output, deadlines and a group kill.

Nothing here trusts the process. Its output is read to the end but only the first bytes are kept, a line
on the results pipe that does not parse is a protocol error rather than a crash of the runner, and stopping
it kills its whole process group (and, with a pid namespace, everything it started).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Sequence

from runner.sandbox import JobDir, Sandbox

log = logging.getLogger(__name__)

MAX_CAPTURE_BYTES = 64 * 1024
MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024
OUTPUT_GRACE_S = 2.0


class _Capture:
    """Reads a stream to its end, keeping the first `limit` bytes, so an output flood costs no memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = self.data.decode("utf-8", "replace")
        if self.dropped:
            text += f"\n… [output truncated: {self.dropped} more bytes were discarded] …"
        return text


class SandboxedProcess:
    """A started sandboxed process with an optional results pipe. Use `async with` so it is always killed."""

    def __init__(self, proc: asyncio.subprocess.Process, pipe: asyncio.StreamReader | None, limit: int) -> None:
        self.proc = proc
        self.pipe = pipe
        self._transport: asyncio.BaseTransport | None = None
        self._capture = _Capture(limit)
        assert proc.stdout is not None
        self._output_task = asyncio.create_task(self._capture.drain(proc.stdout))

    @classmethod
    async def start(
        cls,
        sandbox: Sandbox,
        job: JobDir,
        argv_for_fd: Callable[[int | None], Sequence[str]],
        *,
        slot_env: dict[str, str],
        with_pipe: bool,
        writable_out: bool = False,
        output_limit: int = MAX_CAPTURE_BYTES,
        extra_fds: Sequence[int] = (),
    ) -> SandboxedProcess:
        """Spawn `argv_for_fd(fd)`, where fd is the write end of the results pipe (None without a pipe).
        `extra_fds` are passed through as well (the caller closes its copies)."""
        if not with_pipe:
            proc = await sandbox.spawn(
                job, argv_for_fd(None), slot_env=slot_env, writable_out=writable_out, pass_fds=extra_fds
            )
            return cls(proc, None, output_limit)
        read_fd, write_fd = os.pipe()
        try:
            proc = await sandbox.spawn(
                job,
                argv_for_fd(write_fd),
                slot_env=slot_env,
                writable_out=writable_out,
                pass_fds=(write_fd, *extra_fds),
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_EVENT_LINE_BYTES)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
        started = cls(proc, reader, output_limit)
        started._transport = transport
        return started

    async def __aenter__(self) -> SandboxedProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def read_line(self, timeout: float) -> bytes:
        """The next line of the results pipe, b"" at its end. TimeoutError past `timeout`; ValueError when the
        process writes a line longer than the pipe's limit."""
        assert self.pipe is not None
        if timeout <= 0:
            raise TimeoutError
        return await asyncio.wait_for(self.pipe.readline(), timeout)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def wait(self, timeout: float) -> int | None:
        """The exit status, or None if the process is still running after `timeout`."""
        try:
            return await asyncio.wait_for(self.proc.wait(), max(timeout, 0.0))
        except TimeoutError:
            return None

    async def stop(self) -> None:
        """Kill the whole process group and release the pipes. Safe to call twice."""
        kill_group(self.proc.pid)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        await self.proc.wait()
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def output(self) -> str:
        """stdout and stderr together, truncated. Waits briefly: a stray process may still hold the pipe."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._output_task), OUTPUT_GRACE_S)
        if not self._output_task.done():
            self._output_task.cancel()
        return self._capture.text()


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def signal_name(returncode: int) -> str | None:
    """The signal that ended a process: negative codes from a direct child, 128 + N from the sandbox's init."""
    if returncode < 0:
        number = -returncode
    elif 128 < returncode <= 128 + 64:
        number = returncode - 128
    else:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_exit(returncode: int, max_file_mb: int) -> tuple[str, str]:
    """(code, message) for a worker that ended without a result."""
    hints = {
        "SIGSEGV": "a segmentation fault: the code read or wrote memory it does not own",
        "SIGBUS": "a bus error: a misaligned or unmapped memory access",
        "SIGFPE": "an arithmetic fault, such as an integer division by zero",
        "SIGILL": "an illegal instruction",
        "SIGABRT": "an abort: a failed assertion or a fatal error in a library",
        "SIGXFSZ": f"a file larger than the runner's {max_file_mb} MiB limit",
        "SIGKILL": "killed, most likely for using too much memory",
        "SIGXCPU": "the CPU-time limit",
    }
    if returncode == 125:
        return "internal", "The runner could not set up its sandbox. This is a fault of the runner; try again later."
    name = signal_name(returncode)
    if name is not None:
        hint = hints.get(name)
        return "crashed", f"The worker running your submission was stopped by {name}" + (f" ({hint})." if hint else ".")
    return "crashed", f"The worker running your submission exited with code {returncode} before finishing."
