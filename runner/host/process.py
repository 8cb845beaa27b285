"""One sandboxed process seen from the runner: a results pipe, captured output, deadlines, a memory limit and a
group kill.

Nothing here trusts the process. Its output is read to the end but only the first bytes are kept, a line
on the results pipe that does not parse is a protocol error rather than a crash of the runner, and stopping
it kills its whole process group (and, with a pid namespace, everything it started).

The memory limit is watched from outside: RLIMIT_AS would break CUDA, which reserves address ranges far larger
than the memory it uses. Every `MEMORY_POLL_S` the runner counts what the process tree holds, and kills the
whole group past the limit. Where the host delegates a cgroup, the tree runs in a memory cgroup of its own
(`runner/host/memory_cgroup.py`): its anonymous and shared-memory pages are the count, and the kernel enforces
a ceiling a little above the limit. Otherwise the count is the anonymous and shared-memory resident pages of
the process and all its descendants (with a pid namespace nothing it starts can leave that tree), plus the
shared memory they hold without mapping it: memfds, the job's tmpfs files, its SysV segments
(`runner/host/held_memory.py`).

Kept as one module: one process's life seen from the runner (its pipes, deadlines, memory limit and group kill),
whose clean-up paths must all see the same state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence

from runner.host.held_memory import JOB_TMPFS, held_objects, mapped_object_bytes
from runner.host.memory_cgroup import CgroupError, JobCgroup, ceiling_bytes
from runner.host.sandbox import JobDir, MemoryBounds, Sandbox, SandboxLevel

log = logging.getLogger(__name__)

MAX_CAPTURE_BYTES = 64 * 1024
MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024
OUTPUT_GRACE_S = 2.0
MEMORY_POLL_S = 0.1
NAMESPACE_EXIT_GRACE_S = 10.0  # for the kernel to kill a pid namespace's processes once its init is gone
MEMORY_CONFIRM_S = 1.0  # how often the exact (and slower) count may run while the quick one stays over
_GIB = 1 << 30


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


class _MemoryCount:
    """How one process tree's memory is counted: by its cgroup, or from /proc (its pages, and the shared memory
    it holds without mapping it)."""

    def __init__(
        self, cgroup: JobCgroup | None, sysv_channel: socket.socket | None, tmpfs_paths: tuple[str, ...]
    ) -> None:
        self.cgroup = cgroup
        self.tmpfs_paths = tmpfs_paths
        self._sysv_channel = sysv_channel
        self._sysv_fd: int | None = None

    @property
    def exact(self) -> bool:
        """Whether `quick` already counts each page once (a cgroup's count does)."""
        return self.cgroup is not None

    def quick(self, pid: int) -> int:
        if self.cgroup is not None:
            return self.cgroup.held_bytes()
        return job_memory(pid, tmpfs_paths=self.tmpfs_paths, sysv_fd=self._sysv())

    def confirmed(self, pid: int) -> int:
        if self.cgroup is not None:
            return self.cgroup.held_bytes()
        return job_memory(pid, proportional=True, tmpfs_paths=self.tmpfs_paths, sysv_fd=self._sysv())

    def over_ceiling(self) -> bool:
        """Whether the kernel killed a process of the tree at the cgroup's ceiling."""
        return self.cgroup is not None and self.cgroup.oom_kills() > 0

    def kill_all(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def _sysv(self) -> int | None:
        """The listing of the job's SysV segments, once the sandbox's init has sent it."""
        if self._sysv_fd is None and self._sysv_channel is not None:
            try:
                _, fds, _, _ = socket.recv_fds(self._sysv_channel, 16, 1)
            except (BlockingIOError, InterruptedError):
                return None
            except OSError:
                fds = []
            self._sysv_channel.close()
            self._sysv_channel = None
            self._sysv_fd = fds[0] if fds else None
        return self._sysv_fd

    async def close(self) -> None:
        """Release the listing (it keeps the job's IPC namespace, and its segments, alive) and the cgroup."""
        if self._sysv_channel is not None:
            self._sysv_channel.close()
            self._sysv_channel = None
        if self._sysv_fd is not None:
            os.close(self._sysv_fd)
            self._sysv_fd = None
        if self.cgroup is not None:
            cgroup, self.cgroup = self.cgroup, None
            await asyncio.to_thread(cgroup.remove)


async def _memory_count(
    sandbox: Sandbox, job: JobDir, limit: int
) -> tuple[_MemoryCount | None, MemoryBounds, list[int]]:
    """How a process tree with the memory limit `limit` is bounded and counted, and the descriptors that only the
    child needs (the caller closes them once it is spawned)."""
    if limit <= 0:
        return None, MemoryBounds(), []
    full = sandbox.level is SandboxLevel.FULL
    shm_limit = limit if full else None
    if sandbox.cgroups is not None:
        try:
            cgroup = await asyncio.to_thread(sandbox.cgroups.create, limit)
        except CgroupError as exc:
            log.warning("counting this job's memory from /proc instead: %s", exc)
        else:
            try:
                procs_fd = cgroup.open_procs()
            except OSError:
                await asyncio.to_thread(cgroup.remove)
                raise
            return _MemoryCount(cgroup, None, ()), MemoryBounds(procs_fd, shm_limit), [procs_fd]
    if not full:
        return _MemoryCount(None, None, ()), MemoryBounds(), []
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    child_fd = theirs.detach()
    tmpfs = (*JOB_TMPFS, str(job.scratch))
    return _MemoryCount(None, ours, tmpfs), MemoryBounds(None, shm_limit, child_fd), [child_fd]


class SandboxedProcess:
    """A started sandboxed process with an optional results pipe. Use `async with` so it is always killed."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        pipe: asyncio.StreamReader | None,
        limit: int,
        memory_limit: int = 0,
        own_pid_namespace: bool = False,
        memory: _MemoryCount | None = None,
    ) -> None:
        self.proc = proc
        self.pipe = pipe
        self.own_pid_namespace = own_pid_namespace
        self._transport: asyncio.BaseTransport | None = None
        self._capture = _Capture(limit)
        assert proc.stdout is not None
        self._output_task = asyncio.create_task(self._capture.drain(proc.stdout))
        self.memory_limit = memory_limit
        self._memory = memory
        self._memory_exceeded: int | None = None  # the bytes seen when the limit stopped it
        self._killed = False  # the runner stopped it (a deadline, the memory limit, the end of the job)
        self._memory_task = asyncio.create_task(self._watch_memory()) if memory is not None else None

    @property
    def memory_exceeded(self) -> int | None:
        """The bytes the tree held when the memory limit stopped it (the kernel's ceiling, where the kernel
        stopped it first); None while it has not been stopped for memory."""
        if self._memory_exceeded is None and self._memory is not None and self._memory.over_ceiling():
            self._memory_exceeded = ceiling_bytes(self.memory_limit)
        return self._memory_exceeded

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
        memory_limit: int = 0,
        loopback: bool = False,
    ) -> SandboxedProcess:
        """Spawn `argv_for_fd(fd)`, where fd is the write end of the results pipe (None without a pipe).
        `extra_fds` are passed through as well (the caller closes its copies). With `memory_limit` (bytes), the
        process tree is killed when its memory passes it, and `memory_exceeded` says so. `loopback`: the job's own
        loopback interface is brought up (its processes talk over TCP, as a distributed job's ranks do)."""
        own_ns = sandbox.level is SandboxLevel.FULL
        memory, bounds, child_fds = await _memory_count(sandbox, job, memory_limit)
        read_fd = write_fd = None
        try:
            if with_pipe:
                read_fd, write_fd = os.pipe()
            proc = await sandbox.spawn(
                job,
                argv_for_fd(write_fd),
                slot_env=slot_env,
                writable_out=writable_out,
                pass_fds=extra_fds if write_fd is None else (write_fd, *extra_fds),
                memory=bounds,
                loopback=loopback,
            )
        except BaseException:
            if read_fd is not None:
                os.close(read_fd)
            if memory is not None:
                await memory.close()
            raise
        finally:
            for fd in (*child_fds, *(() if write_fd is None else (write_fd,))):
                os.close(fd)
        if read_fd is None:
            return cls(proc, None, output_limit, memory_limit, own_ns, memory)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_EVENT_LINE_BYTES)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
        started = cls(proc, reader, output_limit, memory_limit, own_ns, memory)
        started._transport = transport
        return started

    async def _watch_memory(self) -> None:
        memory = self._memory
        assert memory is not None
        confirm_after = 0.0
        while self.proc.returncode is None:
            used = memory.quick(self.proc.pid)
            if used > self.memory_limit and not memory.exact and time.monotonic() >= confirm_after:
                # Resident counts take a page shared by forked processes once per process (a fork bomb of a
                # process that imported torch "uses" terabytes), and a mapped memfd both as pages and as a
                # file: before a kill, count each page once.
                used = memory.confirmed(self.proc.pid)
                confirm_after = time.monotonic() + MEMORY_CONFIRM_S
            elif not memory.exact:
                used = 0
            if memory.over_ceiling():
                used = max(used, ceiling_bytes(self.memory_limit))
            if used > self.memory_limit:
                self._memory_exceeded = used  # before the kill: whoever sees the process die can read why
                log.info(
                    "pid %d used %.2f GiB, over its %.2f GiB limit: killed",
                    self.proc.pid,
                    used / _GIB,
                    self.memory_limit / _GIB,
                )
                self._kill()
                return
            await asyncio.sleep(MEMORY_POLL_S)

    def _kill(self) -> None:
        """SIGKILL to everything the process started. With a pid namespace, to its init only: the kernel kills the
        rest, and `unshare` exits once the last of them is gone (a fork bomb's tasks no longer count against the
        slot uid's RLIMIT_NPROC when the next job starts, and no orphaned init is left for a parent that may never
        reap it). Otherwise, and before `unshare` has made its child, to the whole process group."""
        self._killed = True
        if self._memory is not None:
            self._memory.kill_all()
        inits = _children(fresh=True).get(self.proc.pid, []) if self.own_pid_namespace else []
        for pid in inits:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not inits:
            kill_group(self.proc.pid)

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

    def inner_pids(self) -> list[int]:
        """The processes of its tree below the sandbox's init (`unshare` and the init come first): with the full
        sandbox, those that live inside the job's own root and see its tmpfs mounts."""
        return [pid for pid, depth in _tree(self.proc.pid) if depth >= 2] if self.alive else []

    async def wait(self, timeout: float) -> int | None:
        """The exit status, or None if the process is still running after `timeout`."""
        try:
            return await asyncio.wait_for(self.proc.wait(), max(timeout, 0.0))
        except TimeoutError:
            return None

    async def stop(self) -> None:
        """Kill the whole process group and release the pipes. Safe to call twice."""
        if self._memory_task is not None:
            self._memory_task.cancel()
        if self.proc.returncode is None:
            self._kill()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), NAMESPACE_EXIT_GRACE_S)
        kill_group(self.proc.pid)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        await self.proc.wait()
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self._memory is not None:
            _ = self.memory_exceeded  # read while the cgroup that may tell it still exists
            await self._memory.close()

    async def output(self) -> str:
        """stdout and stderr together, truncated. Waits briefly: a stray process may still hold the pipe."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._output_task), OUTPUT_GRACE_S)
        if not self._output_task.done():
            self._output_task.cancel()
        text = self._capture.text()
        if self._killed and self.own_pid_namespace:
            text = without_unshare_noise(text)
        return text


_children_cache: tuple[float, dict[int, list[int]]] = (0.0, {})


def _children(*, fresh: bool = False) -> dict[int, list[int]]:
    """Every process's children, from one pass over /proc (shared by all watchers for half a poll)."""
    global _children_cache
    taken, children = _children_cache
    if not fresh and time.monotonic() - taken < MEMORY_POLL_S / 2:
        return children
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split(None, 2)[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(name))
    _children_cache = (time.monotonic(), children)
    return children


def _kib_fields(path: str) -> dict[bytes, int] | None:
    """The `Name:  N kB` lines of a /proc file, in bytes; None where it cannot be read."""
    fields: dict[bytes, int] = {}
    try:
        with open(path, "rb") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and parts[2] == b"kB":
                    fields[parts[0].rstrip(b":")] = int(parts[1]) * 1024
    except (OSError, ValueError):
        return None
    return fields


def _resident_private(pid: int, proportional: bool = False) -> int:
    """Anonymous plus shared-memory (memfd, tmpfs) resident bytes: what a process holds that is not a file's
    cached pages. `proportional`: each page divided among the processes that map it (slower: it walks the
    page tables; an older kernel without Pss_Anon gives the whole Pss). 0 for a process that is gone."""
    if proportional:
        rollup = _kib_fields(f"/proc/{pid}/smaps_rollup")
        if rollup is not None and b"Pss_Anon" in rollup:
            return rollup[b"Pss_Anon"] + rollup.get(b"Pss_Shmem", 0)
        if rollup is not None and b"Pss" in rollup:
            return rollup[b"Pss"]
    status = _kib_fields(f"/proc/{pid}/status")
    return 0 if status is None else status.get(b"RssAnon", 0) + status.get(b"RssShmem", 0)


def _tree(root: int) -> list[tuple[int, int]]:
    """`root` and all its descendants, each with its depth below `root`."""
    children = _children()
    found: list[tuple[int, int]] = []
    stack, seen = [(root, 0)], set()
    while stack:
        pid, depth = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.append((pid, depth))
        stack.extend((child, depth + 1) for child in children.get(pid, ()))
    return found


def tree_memory(root: int, *, proportional: bool = False) -> int:
    """The memory (`_resident_private`) of `root` and all its descendants, in bytes."""
    return sum(_resident_private(pid, proportional) for pid, _ in _tree(root))


def job_memory(
    root: int, *, proportional: bool = False, tmpfs_paths: Sequence[str] = (), sysv_fd: int | None = None
) -> int:
    """`tree_memory` plus the shared memory the tree holds without mapping it (`held_memory.held_objects`):
    its memfds, the used blocks of its tmpfs mounts `tmpfs_paths` and the SysV segments `sysv_fd` lists.
    `proportional` counts each page once; the quick count takes a mapped memfd twice, as pages and as a file.
    In the full sandbox the job's own root is seen from depth 2 on: below `unshare`, and below the init."""
    tree = _tree(root)
    pids = [pid for pid, _ in tree]
    held = held_objects(pids, [pid for pid, depth in tree if depth >= 2], tmpfs_paths, sysv_fd)
    total = sum(_resident_private(pid, proportional) for pid in pids) + held.bytes
    if proportional:
        total -= sum(mapped_object_bytes(pid, held) for pid in pids)
    return total


# What util-linux's `unshare --fork` (2.38) writes when its child, the sandbox's init, dies of SIGKILL: it tries to
# end itself with the same signal, and SIGKILL cannot be unblocked. The runner's own kill causes it, so it is
# the runner's noise, not the submission's output.
UNSHARE_KILLED_NOISE = "unshare: sigprocmask unblock failed"


def without_unshare_noise(text: str) -> str:
    """The output without the line `unshare` writes when the runner has killed the sandbox's init."""
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(UNSHARE_KILLED_NOISE))


MEMORY_ADVICE = "Keep host allocations smaller: free buffers you no longer need and avoid large host-side copies."


def describe_memory_limit(limit: int, subject: str = "The solution", advice: str = MEMORY_ADVICE) -> str:
    """The message of the `memory_limit` verdict."""
    amount = f"{limit / _GIB:.1f} GiB" if limit >= _GIB else f"{limit >> 20} MiB"
    used = f"{subject} used more than {amount} of host memory"
    return f"{used} and was stopped (the runner's limit per job). {advice}"


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
