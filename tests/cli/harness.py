"""Running `arena` as a real subprocess, the way a user runs it, with a private store and runner state."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def arena_env(data_dir: Path | str, **extra: str) -> dict[str, str]:
    """The environment of an `arena` run: no DATABASE_URL (so the embedded store under `data_dir`), no
    inherited bot or runner settings, and Python's default SIGINT handling whatever the test runner had."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "ARENA_DATABASE_URL") and not k.startswith(("ARENA_", "RUNNER_", "DISCORD_"))
    }
    env["ARENA_DATA_DIR"] = str(data_dir)
    env.update(extra)
    return env


def arena(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def default_sigint() -> None:
    """A shell that starts the tests in the background makes them ignore SIGINT, and children inherit that:
    Python installs its KeyboardInterrupt handler only when SIGINT is not ignored at start-up."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_arena(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """`arena` in its own session, so that `interrupt` reaches it as Ctrl-C in a terminal does: the SIGINT goes
    to the whole foreground process group, children included."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        preexec_fn=default_sigint,
    )


def interrupt(process: subprocess.Popen[str]) -> None:
    """Ctrl-C: SIGINT to the process group."""
    os.killpg(process.pid, signal.SIGINT)


def wait_for(predicate: object, what: str, timeout_s: float = 120.0, every_s: float = 0.2) -> None:
    """Poll `predicate()` until it is true; fail naming `what` after a generous deadline (a busy machine)."""
    assert callable(predicate)
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}")
        time.sleep(every_s)


def error_lines(stderr: str) -> list[str]:
    """The lines a user reads as the outcome (log records and progress lines excluded)."""
    return [line for line in stderr.splitlines() if line.startswith(("error", "interrupted"))]


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, status: int = 2) -> str:
    """The run failed with `status`, and said so in exactly one line holding `needles`, with no traceback."""
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@contextmanager
def closed_port() -> Iterator[int]:
    """A local TCP port with nothing listening on it (connections are refused) while the block runs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        # Bound, never listening: nobody else gets the port, and a connection to it is refused.
        yield port


@contextmanager
def busy_port() -> Iterator[int]:
    """A local TCP port on which something already listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]
