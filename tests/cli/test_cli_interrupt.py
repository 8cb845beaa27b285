"""Ctrl-C on `arena submit` cancels the job: its workers die, its row ends `failed` ("cancelled by the user"),
the CLI says so in one line and exits 130, and no later `arena submit` runs it again.

These run real jobs (an infinite loop in a sandboxed worker), as a user would, with SIGINT sent to the
process group the way a terminal sends Ctrl-C.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from core.store.embedded import start_embedded
from runner.auth import sign_headers
from tests.cli.harness import (
    ROOT,
    arena,
    arena_env,
    closed_port,
    default_sigint,
    error_lines,
    interrupt,
    start_arena,
    wait_for,
)

pytestmark = pytest.mark.timeout(600)

LOOP = "def solution(a, b, c, n):\n    while True:\n        pass\n"
# Deadlines far beyond the test's own waits: the loop must end by Ctrl-C, never by the runner's time limit.
LONG_DEADLINES = {"RUNNER_TEST_TIMEOUT_S": "1800", "RUNNER_JOB_TIMEOUT_S": "1800"}


@pytest.fixture
def state_dir() -> Iterator[Path]:
    """The runner's state for this test only, so that its workers are told apart from anyone else's by the job
    paths on their command lines. Traversable by the sandbox's uid (pytest's temporary root is private)."""
    path = Path(tempfile.mkdtemp(prefix="arena-interrupt-"))
    path.chmod(0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def workers(state_dir: Path) -> list[int]:
    """Pids of live processes whose command line names a path under `state_dir`: the job's judge and launcher."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        zombie = stat.rsplit(")", 1)[-1].split()[0] == "Z"
        if str(state_dir).encode() in cmdline and not zombie:
            found.append(int(entry.name))
    return found


def _cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime + stime


def spinning(state_dir: Path) -> set[int]:
    """The workers under `state_dir` that burn CPU now: the one running the infinite loop (the check that the
    job's workers are found at all before they are expected to die)."""
    before = {pid: _cpu_ticks(pid) for pid in workers(state_dir)}
    time.sleep(1.0)
    busy = set()
    for pid, ticks in before.items():
        now = _cpu_ticks(pid)
        if ticks is not None and now is not None and now - ticks >= 5:  # of ~100 a second for a spinning core
            busy.add(pid)
    return busy


def gone(pids: set[int]) -> bool:
    """Whether every one of `pids` has exited (a zombie counts as exited)."""
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            return False
    return True


class StderrLines:
    """Collects a running process's stderr lines in a thread, so that a test can wait for one."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.lines: list[str] = []
        self._stream = process.stderr
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            self.lines.append(line.rstrip("\n"))

    def has(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "\n".join(self.lines)


def interrupted(process: subprocess.Popen[str], stderr: StderrLines) -> str:
    """Ctrl-C, then the process's stderr once it has exited (its pipes closed)."""
    interrupt(process)
    try:
        process.wait(timeout=120)
        return stderr.text()
    finally:
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def _start_looping_submit(
    tmp_path: Path, env: dict[str, str], state_dir: Path, *extra: str
) -> tuple[subprocess.Popen[str], StderrLines]:
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP)
    process = start_arena("submit", "vector_add", str(loop), "--device", "cpu", "--mode", "test", *extra, env=env)
    stderr = StderrLines(process)
    # Imported means the worker is about to call `solution`, which never returns.
    wait_for(lambda: stderr.has("imported") or process.poll() is not None, "the solution to be imported")
    assert process.poll() is None, stderr.text()
    loopers: set[int] = set()

    def found() -> bool:
        loopers.update(spinning(state_dir))
        return bool(loopers)

    wait_for(found, "a worker running the infinite loop")
    return process, stderr, loopers


async def _store_rows(data_dir: Path) -> tuple[list[asyncpg.Record], list[asyncpg.Record]]:
    server = await start_embedded(data_dir)
    try:
        conn = await asyncpg.connect(server.dsn())
        try:
            subs = await conn.fetch(
                """SELECT s.id, s.status, s.error_code, s.error_message, j.id AS job_id, j.state,
                j.last_error FROM submissions s JOIN jobs j ON j.submission_id = s.id ORDER BY s.id, j.id"""
            )
            moves = await conn.fetch("SELECT job_id, from_state, to_state, note FROM job_transitions ORDER BY id")
            return subs, moves
        finally:
            await conn.close()
    finally:
        await server.stop()


def test_ctrl_c_cancels_the_job_and_the_next_submit_runs_only_its_own(tmp_path: Path, state_dir: Path) -> None:
    data_dir = tmp_path / "store"
    env = arena_env(data_dir, RUNNER_STATE_DIR=str(state_dir), **LONG_DEADLINES)
    process, stderr, _ = _start_looping_submit(tmp_path, env, state_dir)

    log = interrupted(process, stderr)
    assert process.returncode == 130, log
    assert "Traceback" not in log
    assert error_lines(log) == ["interrupted (Ctrl-C): submission #1 was cancelled and will not run again."], log
    wait_for(lambda: not workers(state_dir), "the cancelled job's workers to die")

    second = arena("submit", "vector_add", "examples/vector_add.py", "--device", "cpu", "--mode", "test", env=env)
    assert second.returncode == 0, second.stderr
    assert "recorded as submission #2" in second.stderr
    assert "all 3 test cases passed" in second.stdout

    subs, moves = asyncio.run(_store_rows(data_dir))
    first, own = subs
    assert (first["id"], first["status"], first["error_code"]) == (1, "failed", "cancelled")
    assert "Cancelled by the user" in first["error_message"]
    assert first["state"] == "failed" and "Cancelled by the user" in first["last_error"]
    assert (own["id"], own["status"], own["state"]) == (2, "passed", "done")
    # The cancel was the first job's last move, and it came before anything the second submit did: that one ran
    # only its own job (the first was never put back in the queue nor dispatched again).
    order = [(m["job_id"], m["to_state"], m["note"]) for m in moves]
    last_of_first = max(i for i, (job, _, _) in enumerate(order) if job == first["job_id"])
    first_of_own = min(i for i, (job, _, _) in enumerate(order) if job == own["job_id"])
    assert order[last_of_first][1] == "failed" and "Cancelled by the user" in order[last_of_first][2], order
    assert last_of_first < first_of_own, order


def test_ctrl_c_without_the_store_stops_the_job(tmp_path: Path, state_dir: Path) -> None:
    env = arena_env(tmp_path / "store", RUNNER_STATE_DIR=str(state_dir), **LONG_DEADLINES)
    process, stderr, _ = _start_looping_submit(tmp_path, env, state_dir, "--no-store")
    log = interrupted(process, stderr)
    assert process.returncode == 130, log
    assert error_lines(log) == ["interrupted (Ctrl-C); the job was stopped and nothing was recorded."], log
    wait_for(lambda: not workers(state_dir), "the job's workers to die")


def _healthy(url: str, secret: str) -> bool:
    request = urllib.request.Request(url + "/v1/health", headers=sign_headers(secret.encode(), "GET", "/v1/health"))
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def test_ctrl_c_on_a_remote_submit_cancels_the_job_on_the_runner(tmp_path: Path, state_dir: Path) -> None:
    secret = secrets.token_hex(24)
    secret_file = tmp_path / "secret"
    secret_file.write_text(secret)
    with closed_port() as port:
        pass  # a free port, released for the daemon
    env = arena_env(tmp_path / "store", RUNNER_SECRET=secret, RUNNER_STATE_DIR=str(state_dir), **LONG_DEADLINES)
    # Without workers started ahead for the next job, every worker under the state dir is this job's: all of
    # them must die. (Which worker a job runs in is the daemon's business, not the CLI's.)
    env["RUNNER_WARM_WORKERS"] = "0"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "arena", "runner", "serve", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=default_sigint,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _healthy(url, secret) or daemon.poll() is not None, "the runner daemon to answer")
        assert daemon.poll() is None, "the runner daemon did not start"
        process, stderr, loopers = _start_looping_submit(
            tmp_path, env, state_dir, "--runner", url, "--secret-file", str(secret_file)
        )
        log = interrupted(process, stderr)
        assert process.returncode == 130, log
        lines = error_lines(log)
        assert len(lines) == 1 and lines[0].startswith("interrupted (Ctrl-C); job "), log
        assert lines[0].endswith(f"was cancelled on the runner at {url}."), log
        # The daemon lives on; the job's workers do not.
        wait_for(lambda: gone(loopers) and not workers(state_dir), "the cancelled job's workers to die")
        assert daemon.poll() is None
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(daemon.pid, 9)
            daemon.wait()
