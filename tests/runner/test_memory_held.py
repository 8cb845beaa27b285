"""Memory that no process maps counts against the per-job limit: memfds written and never mapped, detached SysV
segments, POSIX shared memory, files on the job's tmpfs. Each way of holding twice the limit ends in
`memory_limit`, counted by a job cgroup where the host delegates one and from /proc where it does not, and the
host gets the memory back. A job that holds a little each way passes. Real sandbox, real workers."""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

import pytest

from runner.host.executor import Executor
from runner.host.memory_cgroup import find_job_cgroups
from runner.host.sandbox import SandboxLevel
from runner.job.run import run_job
from tests.runner.conftest import job_request, settings_for, submission

pytestmark = pytest.mark.timeout(600)

LIMIT_MB = 384  # the launcher with torch imported holds about 150 MiB of it
HOLD_MB = 2 * LIMIT_MB
HONEST_MB = 32  # in each of the four ways: 128 MiB
WAYS = ("memfd", "sysv", "posix_shm", "tmpfs_file")
# Room on the job's tmpfs mounts for what the holders write: the bound must be the memory limit, not ENOSPC.
SCRATCH_MB = 1024


async def executor_counting(state_dir: Path, counting: str) -> Executor:
    """An executor whose jobs' memory is counted by a cgroup (`cgroup`) or from /proc (`proc`)."""
    if counting == "cgroup" and await asyncio.to_thread(find_job_cgroups, "auto") is None:
        pytest.skip(
            "this host delegates no memory cgroup to the runner (no cgroup v2 memory controller under a cgroup it "
            "owns, no writable cgroup v1 memory hierarchy): the /proc count is tested instead"
        )
    settings = settings_for(
        state_dir,
        secrets.token_hex(24),
        max_memory_mb=LIMIT_MB,
        scratch_mb=SCRATCH_MB,
        test_timeout_s=60.0,
        memory_cgroup="auto" if counting == "cgroup" else "off",
    )
    executor = await Executor.from_settings(settings)
    assert (executor.sandbox.cgroups is not None) == (counting == "cgroup")
    if counting == "proc" and executor.sandbox.level is not SandboxLevel.FULL:
        pytest.skip(
            "without user, pid, mount and IPC namespaces a job has no tmpfs or IPC namespace of its own to count"
        )
    return executor


def host_shmem_bytes() -> int:
    """The host's shared memory in use (memfds, SysV, tmpfs), from /proc/meminfo."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("/proc/meminfo has no Shmem line")


async def shmem_returns_below(bound: int, wait_s: float = 60.0) -> int:
    """The host's shared memory once it falls below `bound` (an IPC namespace is freed after its last process
    exits, by a kernel worker), or what it still is after `wait_s`."""
    deadline = time.monotonic() + wait_s
    while (now := host_shmem_bytes()) >= bound and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return now


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("counting", ["cgroup", "proc"])
async def test_memory_no_process_maps_ends_in_memory_limit(state_dir: Path, counting: str, way: str) -> None:
    executor = await executor_counting(state_dir, counting)
    before = host_shmem_bytes()
    source = submission("hold_memory.py", WAYS=way, MIB=HOLD_MB, WAIT="wait")
    result = await run_job(job_request(source), executor=executor)
    assert result.status == "error"
    assert result.error is not None and result.error.code == "memory_limit", result.error
    assert f"more than {LIMIT_MB} MiB of host memory" in result.error.message
    # The host is unharmed: what the job held (its segments, its tmpfs, its memfds) went with it.
    after = await shmem_returns_below(before + (HOLD_MB << 20) // 4)
    assert after < before + (HOLD_MB << 20) // 4, f"{(after - before) >> 20} MiB of shared memory stayed behind"


@pytest.mark.parametrize("counting", ["cgroup", "proc"])
async def test_a_job_that_holds_less_than_the_limit_passes(state_dir: Path, counting: str) -> None:
    executor = await executor_counting(state_dir, counting)
    source = submission("hold_memory.py", WAYS=",".join(WAYS), MIB=HONEST_MB, WAIT="no")
    result = await run_job(job_request(source), executor=executor)
    assert result.status == "passed", result.error
