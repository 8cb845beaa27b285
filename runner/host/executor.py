"""Where and how jobs run on this host: the sandbox, the deadlines, the private and cached directories.

Kept as one module: the executor and the job processes it starts share the job's directories and deadlines; it is
the one place that decides where and how a job runs on this host.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import shutil
import socket
import sys
import uuid
import weakref
from dataclasses import dataclass, replace
from pathlib import Path

from contract.wire import JobRequest
from runner.host.compile import DEFAULT_CACHE_MAX_BYTES
from runner.host.devices import Slot
from runner.host.memory_cgroup import find_job_cgroups
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir, Sandbox, SandboxPolicy, open_sandbox, python_command
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)

DEFAULT_JOB_TIMEOUT_S = 900.0
# Beside the judge's request: the rates measured on the slot's GPU, when the runner has them.
PEAKS_FILE = "peaks.json"
SASS_AUDIT_FILE = "sass_audit.json"  # runner/job/precision_audit.py writes it, the judge reads it
# The judge's one line back on its gate: its tests passed, and Triton's cubins may be read.
TESTED = b"tested"


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


@dataclass(eq=False)
class JobsLease:
    """This process's folder of job directories, `<state_dir>/jobs/<owner>`, held by an flock on `<owner>.lock`
    for as long as the process lives (or the lease: dropping it frees the lock). Several processes may share a
    state directory (a daemon and `arena submit`, two CLIs): each cleans only the folders whose lock it can
    take, those of processes that died."""

    jobs_root: Path
    folder: Path
    lock_fd: int

    def __post_init__(self) -> None:
        self._unlock = weakref.finalize(self, _close_quietly, self.lock_fd)

    @classmethod
    def take(cls, jobs_root: Path) -> JobsLease:
        """Sweep the dead owners' folders, then make and lock our own. Blocking: call it through a thread."""
        jobs_root.mkdir(parents=True, exist_ok=True)
        os.chmod(jobs_root, 0o711)
        sweep_stale_jobs(jobs_root)
        while True:
            name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
            lock_path = jobs_root / f"{name}.lock"
            fd = os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A sweeper may have taken the fresh file for a dead owner's and unlinked it before our flock.
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(fd).st_ino == os.stat(lock_path).st_ino:
                    folder = jobs_root / name
                    folder.mkdir(mode=0o711)
                    os.chmod(folder, 0o711)
                    return cls(jobs_root, folder, fd)
            os.close(fd)

    def release(self) -> None:
        """Remove our folder and its lock (a process that dies without this leaves them to the next sweep)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        (self.jobs_root / f"{self.folder.name}.lock").unlink(missing_ok=True)
        self._unlock()

    def abandon(self) -> None:
        """Let go of the lock and leave the folder, as a process that dies does."""
        self._unlock()


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def sweep_stale_jobs(jobs_root: Path) -> list[Path]:
    """Delete the job directories that no live process owns; returns what was removed.

    A folder whose `<name>.lock` can be locked belongs to a dead process. An entry without a lock file is from
    an older layout or a crash before the lock was made (an owner locks its file before it makes its folder).
    """
    removed: list[Path] = []
    try:
        entries = sorted(jobs_root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.name.endswith(".lock"):
            if entry.is_file() and not entry.with_suffix("").exists():
                _remove_if_unlocked(entry, None)
            continue
        lock = entry.with_name(entry.name + ".lock")
        if not lock.exists():
            _remove_tree(entry)
            removed.append(entry)
        elif _remove_if_unlocked(lock, entry):
            removed.append(entry)
    if removed:
        log.info("removed %d stale job folder(s) under %s", len(removed), jobs_root)
    return removed


def _remove_if_unlocked(lock: Path, folder: Path | None) -> bool:
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False  # a live owner holds it
            raise
        if folder is not None:
            _remove_tree(folder)
        lock.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


def _remove_tree(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Executor:
    """How jobs run on this host: the sandbox, the deadlines and where private and cached files live."""

    sandbox: Sandbox
    deadlines: Deadlines
    jobs_dir: Path  # this process's own folder of job directories: <state_dir>/jobs/<owner>
    cache_dir: Path | None
    output_limit: int = 64 * 1024
    max_file_mb: int = 512
    cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES
    memory_limit_mb: int = 0
    lease: JobsLease | None = None

    @property
    def state_dir(self) -> Path:
        """The runner's private state: jobs' directories and the GPUs' measured peaks."""
        return self.jobs_dir.parent.parent

    @property
    def memory_limit_bytes(self) -> int:
        return self.memory_limit_mb << 20

    @classmethod
    async def from_settings(cls, settings: RunnerSettings, slots: int = 1) -> Executor:
        """Probe the sandbox and the memory cgroups, and clean the job directories that processes which died
        left in the state dir. `slots`: how many jobs run at once, which the default memory limit shares."""
        policy = await asyncio.to_thread(SandboxPolicy.from_settings, settings)
        await asyncio.to_thread(_make_private_dirs, settings.state_dir, settings.resolved_cache_dir())
        lease = await asyncio.to_thread(JobsLease.take, settings.state_dir / "jobs")
        memory_mb = settings.resolved_max_memory_mb(slots)
        try:
            sandbox = await open_sandbox(policy, lease.folder, required=settings.require_namespaces)
            if memory_mb > 0:
                cgroups = await asyncio.to_thread(find_job_cgroups, settings.memory_cgroup)
                if cgroups is not None:
                    await asyncio.to_thread(cgroups.remove_stale)
                    sandbox = replace(sandbox, cgroups=cgroups)
                log.info(
                    "memory limit per job: %d MiB, counted %s",
                    memory_mb,
                    f"by cgroup v{cgroups.version} under {cgroups.parent}" if cgroups else "from /proc",
                )
        except BaseException:
            lease.release()
            raise
        return cls(
            sandbox,
            Deadlines.from_settings(settings),
            lease.folder,
            settings.resolved_cache_dir(),
            settings.output_limit_bytes,
            settings.max_file_mb,
            settings.cache_max_mb * 1024 * 1024,
            memory_mb,
            lease,
        )


def _make_private_dirs(state_dir: Path, cache_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(state_dir, 0o711)
    cache_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(cache_dir, 0o700)


_default_executors: dict[tuple[str, float], Executor] = {}


_starting: dict[tuple[str, float], asyncio.Task[Executor]] = {}


async def default_executor(python: str = sys.executable, timeout_s: float = DEFAULT_JOB_TIMEOUT_S) -> Executor:
    """The executor of the local CLI: RUNNER_* settings where set (no secret is needed), probed once. Jobs that
    start together (the local runner's slots) wait for the one executor being made."""
    key = (python, timeout_s)
    if key in _default_executors:
        return _default_executors[key]
    loop = asyncio.get_running_loop()
    task = _starting.get(key)
    if task is None or task.get_loop() is not loop:
        settings = RunnerSettings(python=python, job_timeout_s=timeout_s)
        task = _starting[key] = loop.create_task(Executor.from_settings(settings))
    try:
        executor = await asyncio.shield(task)
    finally:
        if task.done() and _starting.get(key) is task:
            del _starting[key]
    _default_executors[key] = executor
    return executor


def job_name() -> str:
    return uuid.uuid4().hex[:16]


def job_env(slot: Slot, request: JobRequest) -> dict[str, str]:
    """The slot's GPU, unless the job asked for the CPU: then no GPU is visible at all."""
    return dict(slot.env) if request.device_kind != "cpu" else {"CUDA_VISIBLE_DEVICES": ""}


def judge_argv(
    executor: Executor, job: JobDir, events_fd: int | None, channel_fd: int, wait_fd: int | None
) -> list[str]:
    args = ["--request", str(job.in_dir / "request.json"), "--workdir", str(job.scratch / "work")]
    args += ["--peaks", str(job.in_dir / PEAKS_FILE), "--sass-audit", str(job.in_dir / SASS_AUDIT_FILE)]
    args += ["--events-fd", str(events_fd), "--channel-fd", str(channel_fd)]
    if wait_fd is not None:
        args += ["--wait-fd", str(wait_fd)]
    return python_command(executor.sandbox.policy.python, "runner.judge.main", args)


def launcher_argv(executor: Executor, job: JobDir, channel_fd: int) -> list[str]:
    args = ["--channel-fd", str(channel_fd), "--workdir", str(job.scratch / "work")]
    args += ["--prebuilt-dir", str(job.in_dir / "prebuilt")]
    return python_command(executor.sandbox.policy.python, "runner.launcher.main", args)


@dataclass
class JobProcesses:
    """A job's two sandboxed processes and their private directories.

    The judge (our code only) owns the request, the seed, the expected outputs and the verdict; the launcher
    loads the submission. They talk over a socket pair made here, and each sees only its own directory.
    """

    judge: SandboxedProcess
    launcher: SandboxedProcess
    judge_job: JobDir
    launcher_job: JobDir

    @property
    def alive(self) -> bool:
        return self.judge.alive and self.launcher.alive

    async def stop(self) -> None:
        """Both at once: each one's exit tears down a CUDA context, which takes a tenth of a second or more."""
        await asyncio.gather(self.launcher.stop(), self.judge.stop())


async def start_processes(
    executor: Executor, slot_env: dict[str, str], judge_job: JobDir, launcher_job: JobDir, wait_fd: int | None = None
) -> JobProcesses:
    """Start the launcher and the judge of one job, joined by a fresh socket pair."""
    judge_end, launcher_end = socket.socketpair()
    try:
        launcher = await SandboxedProcess.start(
            executor.sandbox,
            launcher_job,
            lambda _fd: launcher_argv(executor, launcher_job, launcher_end.fileno()),
            slot_env=slot_env,
            with_pipe=False,
            output_limit=executor.output_limit,
            extra_fds=(launcher_end.fileno(),),
            memory_limit=executor.memory_limit_bytes,
        )
        extra = (judge_end.fileno(),) if wait_fd is None else (judge_end.fileno(), wait_fd)
        try:
            judge = await SandboxedProcess.start(
                executor.sandbox,
                judge_job,
                lambda fd: judge_argv(executor, judge_job, fd, judge_end.fileno(), wait_fd),
                slot_env=slot_env,
                with_pipe=True,
                output_limit=executor.output_limit,
                extra_fds=extra,
            )
        except BaseException:
            await launcher.stop()
            raise
    finally:
        judge_end.close()
        launcher_end.close()
    return JobProcesses(judge, launcher, judge_job, launcher_job)


async def create_job_dirs(executor: Executor, slot: Slot) -> tuple[JobDir, JobDir]:
    uid = executor.sandbox.uid_for(slot.index)
    judge_job = await asyncio.to_thread(JobDir.create, executor.jobs_dir, job_name(), uid)
    launcher_job = await asyncio.to_thread(JobDir.create, executor.jobs_dir, job_name(), uid)
    return judge_job, launcher_job


@dataclass
class WarmWorker:
    """A job's processes started before their job, held at a gate of two steps.

    Started ahead (the slot's next job), Python and torch are imported off any job's clock; they make no CUDA
    context while they wait, since another job may be timed on the GPU. `go` (the job has the slot now): the
    judge reads its request and prepares, CUDA contexts included, while the host compiles. `built`: the
    library is in the launcher's prebuilt folder, and the submission may be loaded. Closing the gate instead
    (a compile error, a cancel) ends them without loading anything. They are as fresh as any: they have run no
    submission.

    The gate is a socket pair, so that the judge can answer once: `tested` (a Python submission's tests passed,
    and the cubins Triton compiled for it may be audited), to which `audited` replies. The launcher never holds
    either end.
    """

    processes: JobProcesses
    go_fd: int
    slot_index: int
    gpu_visible: bool

    def fits(self, slot: Slot, request: JobRequest) -> bool:
        cpu_only = request.device_kind == "cpu" and slot.is_gpu
        return self.slot_index == slot.index and self.processes.alive and not cpu_only

    def go(self) -> None:
        """Tell the judge to read its request (written to its in/request.json by now) and prepare."""
        self._signal(b"go\n", close=False)

    def built(self, *, audit_follows: bool = False) -> None:
        """Tell the judge that the submission is ready to load (a CUDA library is in the prebuilt folder).
        `audit_follows`: a precision audit follows, which `audited` announces (a CUDA build's, or the Triton
        cubins' of a Python run on a GPU)."""
        self._signal(b"built\n", close=not audit_follows)

    def audited(self) -> None:
        """Tell the judge that the precision audit is done: in its in/ (`judge_argv`'s --sass-audit) if any."""
        self._signal(b"audited\n", close=True)

    async def tested(self) -> bool:
        """Wait for the judge's `tested` line; False when the judge closed the gate or sent anything else (it
        ended, or audits nothing)."""
        if self.go_fd < 0:
            return False
        loop = asyncio.get_running_loop()
        # A duplicate for the loop, in non-blocking mode (which the gate's own writes, a few bytes, never notice).
        with socket.socket(fileno=os.dup(self.go_fd)) as gate:
            gate.setblocking(False)
            line = b""
            try:
                while not line.endswith(b"\n") and len(line) <= len(TESTED):
                    chunk = await loop.sock_recv(gate, 64)
                    if not chunk:
                        return False
                    line += chunk
            except OSError:
                return False
        return line.strip() == TESTED

    def _signal(self, line: bytes, *, close: bool) -> None:
        if self.go_fd < 0:
            return
        try:
            os.write(self.go_fd, line)
        except OSError:
            close = True  # it died while waiting: the events pipe ends at once and the run reports the crash
        if close:
            os.close(self.go_fd)
            self.go_fd = -1

    async def close(self) -> None:
        """Stop the processes (used or not) and release the channel; the job directories stay."""
        if self.go_fd >= 0:
            os.close(self.go_fd)
            self.go_fd = -1
        await self.processes.stop()

    async def discard(self) -> None:
        await self.close()
        for job in (self.processes.judge_job, self.processes.launcher_job):
            await asyncio.to_thread(job.remove)


async def start_warm_worker(executor: Executor, slot: Slot, env: dict[str, str] | None = None) -> WarmWorker:
    """Start a job's processes for `slot`, waiting at the gate. Cheap to call: it only spawns them. `env` is the
    job's (`job_env`) when they are started for a job in hand; ahead of any job, the slot's."""
    judge_job, launcher_job = await create_job_dirs(executor, slot)
    ours, judges = socket.socketpair()
    try:
        slot_env = dict(slot.env) if env is None else env
        processes = await start_processes(executor, slot_env, judge_job, launcher_job, judges.fileno())
    except BaseException:
        ours.close()
        for job in (judge_job, launcher_job):
            await asyncio.to_thread(job.remove)
        raise
    finally:
        judges.close()
    return WarmWorker(processes, ours.detach(), slot.index, slot.is_gpu)
