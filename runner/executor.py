"""Where and how jobs run on this host: the sandbox, the deadlines, the private and cached directories."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from runner.api import JobRequest
from runner.devices import Slot
from runner.process import SandboxedProcess
from runner.sandbox import JobDir, Sandbox, SandboxPolicy, open_sandbox, python_command
from runner.settings import RunnerSettings

DEFAULT_JOB_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Deadlines:
    """Seconds allowed per phase. `compile` covers nvcc and the worker's start-up and import."""

    compile_s: float = 120.0
    test_s: float = 120.0
    benchmark_s: float = 300.0
    job_s: float = 600.0
    validate_s: float = 300.0

    @classmethod
    def from_settings(cls, settings: RunnerSettings) -> Deadlines:
        return cls(
            settings.compile_timeout_s,
            settings.test_timeout_s,
            settings.benchmark_timeout_s,
            settings.job_timeout_s,
            settings.validate_timeout_s,
        )


@dataclass(frozen=True)
class Executor:
    """How jobs run on this host: the sandbox, the deadlines and where private and cached files live."""

    sandbox: Sandbox
    deadlines: Deadlines
    jobs_dir: Path
    cache_dir: Path | None
    output_limit: int = 64 * 1024
    max_file_mb: int = 512

    @classmethod
    async def from_settings(cls, settings: RunnerSettings) -> Executor:
        policy = SandboxPolicy.from_settings(settings)
        jobs_dir = settings.state_dir / "jobs"
        await asyncio.to_thread(_make_private_dirs, settings.state_dir, settings.resolved_cache_dir())
        sandbox = await open_sandbox(policy, jobs_dir, required=settings.require_namespaces)
        return cls(
            sandbox,
            Deadlines.from_settings(settings),
            jobs_dir,
            settings.resolved_cache_dir(),
            settings.output_limit_bytes,
            settings.max_file_mb,
        )


def _make_private_dirs(state_dir: Path, cache_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(state_dir, 0o711)
    cache_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(cache_dir, 0o700)


_default_executors: dict[tuple[str, float], Executor] = {}


async def default_executor(python: str = sys.executable, timeout_s: float = DEFAULT_JOB_TIMEOUT_S) -> Executor:
    """The executor of the local CLI: RUNNER_* settings where set (no secret is needed), probed once."""
    key = (python, timeout_s)
    if key not in _default_executors:
        settings = RunnerSettings(python=python, job_timeout_s=timeout_s)
        _default_executors[key] = await Executor.from_settings(settings)
    return _default_executors[key]


def job_name() -> str:
    return uuid.uuid4().hex[:16]


def job_env(slot: Slot, request: JobRequest) -> dict[str, str]:
    """The slot's GPU, unless the job asked for the CPU: then no GPU is visible at all."""
    return dict(slot.env) if request.device_kind != "cpu" else {"CUDA_VISIBLE_DEVICES": ""}


def worker_argv(executor: Executor, job: JobDir, events_fd: int | None, wait_fd: int | None) -> list[str]:
    args = ["--request", str(job.in_dir / "request.json"), "--workdir", str(job.scratch / "work")]
    args += ["--events-fd", str(events_fd), "--prebuilt-dir", str(job.in_dir / "prebuilt")]
    if wait_fd is not None:
        args += ["--wait-fd", str(wait_fd)]
    return python_command(executor.sandbox.policy.python, "runner.worker", args)


@dataclass
class WarmWorker:
    """A worker started before its job arrives, so that starting Python, importing torch and creating the CUDA
    context are off the job's clock. It is as fresh as any worker: it has run no submission, and it runs one."""

    job: JobDir
    process: SandboxedProcess
    go_fd: int
    slot_index: int
    gpu_visible: bool

    def fits(self, slot: Slot, request: JobRequest) -> bool:
        cpu_only = request.device_kind == "cpu" and slot.is_gpu
        return self.slot_index == slot.index and self.process.alive and not cpu_only

    def go(self) -> None:
        """Tell the worker to read its request (written to in/request.json by now)."""
        try:
            os.write(self.go_fd, b"go\n")
        except OSError:
            pass  # it died while waiting: the events pipe ends at once and the run reports the crash
        finally:
            os.close(self.go_fd)
            self.go_fd = -1

    async def close(self) -> None:
        """Stop the process (used or not) and release the channel; the job directory stays."""
        if self.go_fd >= 0:
            os.close(self.go_fd)
            self.go_fd = -1
        await self.process.stop()

    async def discard(self) -> None:
        await self.close()
        await asyncio.to_thread(self.job.remove)


async def start_warm_worker(executor: Executor, slot: Slot) -> WarmWorker:
    """Start a worker for `slot` that waits for its job. Cheap to call: it only spawns the process."""
    job = await asyncio.to_thread(JobDir.create, executor.jobs_dir, job_name(), executor.sandbox.uid_for(slot.index))
    read_fd, write_fd = os.pipe()
    try:
        process = await SandboxedProcess.start(
            executor.sandbox,
            job,
            lambda fd: worker_argv(executor, job, fd, read_fd),
            slot_env=dict(slot.env),
            with_pipe=True,
            output_limit=executor.output_limit,
            extra_fds=(read_fd,),
        )
    except BaseException:
        os.close(write_fd)
        await asyncio.to_thread(job.remove)
        raise
    finally:
        os.close(read_fd)
    return WarmWorker(job, process, write_fd, slot.index, slot.is_gpu)
