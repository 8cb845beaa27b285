"""Sandboxed workers die with the process that owns them, whatever kills it, and what a dead owner leaves on disk
is cleaned by the next one to start, never a live owner's.

The owners are real processes: `arena submit` (the CLI's local runner, as the bot's local runner uses it) and
`python -m runner serve`, each running a solution that never returns, then killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.clients.http import RunnerClient
from runner.host.executor import Executor, JobsLease, default_executor, sweep_stale_jobs
from tests.runner.conftest import (
    SUBMISSIONS,
    Daemon,
    _daemon_env,
    _wait_healthy,
    free_port,
    job_request,
    settings_for,
    submission,
)

WORKER_MODULES = ("runner.judge", "runner.launcher")
# Generous: the machine may be busy; the processes go at once when it works, never when it does not.
START_DEADLINE_S = 120.0
DEATH_DEADLINE_S = 60.0


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (ppid, start time, state) of every process."""
    found: dict[int, tuple[int, int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        found[int(name)] = (int(fields[1]), int(fields[19]), fields[0].decode())
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _descendants(root: int) -> dict[int, int]:
    """pid -> start time of every descendant of `root`."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found[child] = table[child][1]
            stack.append(child)
    return found


def _alive(pid: int, started: int) -> bool:
    """Running (not a zombie waiting for a parent that never reaps it) and not a reused pid."""
    entry = _processes().get(pid)
    return entry is not None and entry[1] == started and entry[2] != "Z"


def _is_worker(pid: int) -> bool:
    """A judge or launcher itself: not the sandbox's init or `unshare`, whose command lines name it too."""
    line = _cmdline(pid)
    return any(module in line for module in WORKER_MODULES) and "sandbox_init" not in line


async def _wait_for_workers(owner: subprocess.Popen[bytes], count: int) -> dict[int, int]:
    """The owner's descendants, once `count` judges or launchers run among them."""
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        tree = _descendants(owner.pid)
        if sum(_is_worker(pid) for pid in tree) >= count:
            return tree
        assert owner.poll() is None, f"the owner exited with {owner.returncode} before its workers started"
        assert time.monotonic() < deadline, "the sandboxed workers never started"
        await asyncio.sleep(0.2)


async def _wait_for_text(path: Path, text: str, owner: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while text not in path.read_text(encoding="utf-8", errors="replace"):
        assert owner.poll() is None, f"the owner exited with {owner.returncode}: {path.read_text()}"
        assert time.monotonic() < deadline, f"never saw {text!r}: {path.read_text()}"
        await asyncio.sleep(0.2)


async def _assert_all_die(tree: dict[int, int]) -> None:
    deadline = time.monotonic() + DEATH_DEADLINE_S
    while survivors := {pid: _cmdline(pid)[:120] for pid, started in tree.items() if _alive(pid, started)}:
        assert time.monotonic() < deadline, f"these outlived their owner's SIGKILL: {survivors}"
        await asyncio.sleep(0.2)


def _kill_owner(owner: subprocess.Popen[bytes]) -> None:
    owner.send_signal(signal.SIGKILL)
    owner.wait()


async def test_arena_submit_killed_with_sigkill_takes_its_workers_along(state_dir: Path, tmp_path: Path) -> None:
    solution = tmp_path / "loop.py"
    solution.write_text((SUBMISSIONS / "infinite_loop.py").read_text(encoding="utf-8"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    env.update({"RUNNER_STATE_DIR": str(state_dir), "RUNNER_TEST_TIMEOUT_S": "600", "RUNNER_JOB_TIMEOUT_S": "900"})
    argv = [sys.executable, "-m", "arena", "submit", "vector_add", str(solution), "--no-store", "--mode", "test"]
    progress = tmp_path / "progress.txt"
    with open(progress, "wb") as stderr:
        owner = subprocess.Popen([*argv, "--device", "cpu"], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        # "imported": the launcher has loaded the solution, and the judge's first call to it never returns.
        await _wait_for_text(progress, "imported", owner)
        tree = await _wait_for_workers(owner, count=2)
        _kill_owner(owner)
        await _assert_all_die(tree)
    finally:
        if owner.poll() is None:
            _kill_owner(owner)
    # The dead owner's job directories are left on disk until the next owner starts on the same state dir.
    jobs = state_dir / "jobs"
    assert [p for p in jobs.iterdir() if p.is_dir()], "the killed owner left no job folder to clean"
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    assert [p for p in jobs.iterdir() if p.is_dir()] == [executor.jobs_dir]


async def test_the_runner_daemon_killed_with_sigkill_takes_its_workers_along(state_dir: Path) -> None:
    secret, port = secrets.token_hex(24), free_port()
    env = _daemon_env(state_dir, secret, port)
    env.update({"RUNNER_TEST_TIMEOUT_S": "600", "RUNNER_JOB_TIMEOUT_S": "900"})
    log_path = state_dir.parent / f"orphans-daemon-{port}.log"
    with open(log_path, "wb") as log_file:
        owner = subprocess.Popen(
            [sys.executable, "-m", "runner", "serve"], env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    daemon = Daemon(f"http://127.0.0.1:{port}", secret, owner, state_dir, log_path)
    try:
        await asyncio.to_thread(_wait_healthy, daemon)
        async with RunnerClient(daemon.url, secret.encode()) as client:
            accepted = await client.submit(job_request(submission("infinite_loop.py")))
            async for event in client.events(accepted.job_id):
                if event.type == "compiled":  # the solution is loaded; the judge's first call never returns
                    break
        # The job's judge and launcher, and the next job's, started ahead as the job began (warm workers).
        tree = await _wait_for_workers(owner, count=4)
        _kill_owner(owner)
        await _assert_all_die(tree)
    finally:
        if owner.poll() is None:
            _kill_owner(owner)


def test_a_sweep_keeps_a_live_owners_folder_and_removes_a_dead_ones(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    live = JobsLease.take(jobs)
    dead = JobsLease.take(jobs)
    (live.folder / "job-a").mkdir()
    (dead.folder / "job-b").mkdir()
    legacy = jobs / "0123456789abcdef"  # an older layout's job directory: no owner at all
    legacy.mkdir()
    dead.abandon()  # what the kernel does when the owning process dies: the lock goes, the folder stays
    removed = sweep_stale_jobs(jobs)
    assert set(removed) == {dead.folder, legacy}
    assert (live.folder / "job-a").is_dir()
    assert not dead.folder.exists() and not (jobs / f"{dead.folder.name}.lock").exists()
    live.release()
    assert list(jobs.iterdir()) == []


async def test_two_executors_starting_together_in_one_process_do_not_collide(state_dir: Path) -> None:
    """The local runner's first two jobs each made the runner probe the sandbox in `probe-full-<pid>`."""
    settings = settings_for(state_dir, secrets.token_hex(24))
    first, second = await asyncio.gather(Executor.from_settings(settings), Executor.from_settings(settings))
    assert first.jobs_dir != second.jobs_dir
    assert first.sandbox.level == second.sandbox.level


async def test_the_local_runners_first_jobs_share_one_executor(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two jobs that start together in the CLI or the bot's local runner wait for the same executor."""
    monkeypatch.setenv("RUNNER_STATE_DIR", str(state_dir))
    timeout_s = 600.0 + secrets.randbelow(1000)  # a key no other test has cached
    first, second = await asyncio.gather(default_executor(timeout_s=timeout_s), default_executor(timeout_s=timeout_s))
    assert first is second
    assert [p for p in (state_dir / "jobs").iterdir() if p.is_dir()] == [first.jobs_dir]
