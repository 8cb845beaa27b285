"""The per-job memory limit: a solution that fills host memory past RUNNER_MAX_MEMORY_MB is stopped with its own
verdict, `memory_limit`, while an honest solution under the same limit passes. Real sandbox, real workers."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

from runner.host.executor import Executor
from runner.host.process import tree_memory
from runner.job.run import run_job
from runner.settings import RunnerSettings, host_memory_mb
from tests.runner.conftest import good_request, job_request, settings_for

# Far above what the launcher needs for torch and a small vector add, far below what the hog takes.
LIMIT_MB = 1024
HOG = """
import time

HELD = []


def solution(input_a, input_b, output_c, n):
    # 64 MiB at a time, every page written, up to 3 GiB; then hold it, so a late look still sees it.
    for _ in range(48):
        HELD.append(bytearray(b"\\x01") * (64 << 20))
    time.sleep(60)
"""


async def test_a_solution_over_the_memory_limit_gets_its_own_verdict(state_dir: Path) -> None:
    settings = settings_for(state_dir, secrets.token_hex(24), max_memory_mb=LIMIT_MB, test_timeout_s=60.0)
    executor = await Executor.from_settings(settings)
    result = await run_job(job_request(HOG), executor=executor)
    assert result.status == "error"
    assert result.error is not None and result.error.code == "memory_limit", result.error
    assert "more than 1.0 GiB of host memory" in result.error.message

    honest = await run_job(good_request(), executor=executor)
    assert honest.status == "passed", honest.error


def test_the_slots_together_never_commit_more_than_the_host_can_give(state_dir: Path) -> None:
    """The default limit shares three quarters of the host's memory (or of the runner's own cgroup limit) among
    the slots: all of them at their limit leave the rest to the daemon, the judges and the kernel."""
    settings = RunnerSettings(state_dir=state_dir)
    host_mb = host_memory_mb()
    assert host_mb is not None
    for slots in (1, 2, 8):
        per_job = settings.resolved_max_memory_mb(slots)
        assert 256 <= per_job <= 32 * 1024
        if host_mb >= 8 * 1024:  # above the 256 MiB floor for 8 slots
            assert slots * per_job <= host_mb * 3 // 4, (slots, per_job, host_mb)
    assert settings.resolved_max_memory_mb(2) < settings.resolved_max_memory_mb(1) or host_mb * 3 // 8 > 32 * 1024
    assert RunnerSettings(state_dir=state_dir, max_memory_mb=0).resolved_max_memory_mb(4) == 0
    assert RunnerSettings(state_dir=state_dir, max_memory_mb=300).resolved_max_memory_mb(4) == 300


async def test_tree_memory_counts_the_descendants_of_a_process() -> None:
    """A parent that holds nothing, with a child that holds 256 MiB: the tree's total includes the child."""
    child = "import os, time; b = bytearray(b'\\x01') * (256 << 20); print(os.getpid(), flush=True); time.sleep(60)"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child_pid = None
    try:
        assert proc.stdout is not None
        child_pid = int(await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60))
        await asyncio.sleep(0.1)  # the children map is cached for half a poll
        assert tree_memory(proc.pid) >= 256 << 20
        assert tree_memory(proc.pid) - tree_memory(child_pid) < 64 << 20, "the parent itself holds little"
    finally:
        if child_pid is not None:
            os.kill(child_pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


async def test_pages_that_forked_children_share_are_counted_once() -> None:
    """A fork bomb of a process that imported torch: every child maps the parent's pages. The resident count
    takes them once per child; the count that decides a kill must take them once."""
    code = (
        "import os, sys, time\n"
        "held = bytearray(b'\\x01') * (256 << 20)\n"
        "for _ in range(6):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert (await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)).strip() == "ready"
        await asyncio.sleep(0.1)  # the children map is cached for half a poll
        assert tree_memory(proc.pid) >= 7 * (256 << 20), "each process shows the shared pages as its own"
        assert tree_memory(proc.pid, proportional=True) < 2 * (256 << 20), "counted once, they are 256 MiB"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
