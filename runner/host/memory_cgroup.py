"""A memory cgroup per job, where the host lets this runner make one.

A cgroup counts every page a job's processes bring in, whoever maps it afterwards: anonymous memory, and
shared memory no process maps (a memfd written with write(), a detached SysV segment, a file on a tmpfs). Each
page is counted once, however many processes share it. Its limit is enforced by the kernel itself.

Where the cgroups go (`find_job_cgroups`):
- cgroup v2: under the runner's own delegated cgroup. With the systemd unit in `deploy/systemd` (Delegate=yes,
  DelegateSubgroup=daemon) the runner starts in `<unit>/daemon` and its jobs are made beside it, in `<unit>`.
  Without that subgroup, where the runner's own cgroup is delegated to it (it owns the directory, or it is the
  root of a cgroup namespace), the runner moves itself into `<own>/daemon` first: a v2 cgroup that holds
  processes cannot give controllers to its children;
- cgroup v1: under the runner's own memory cgroup, which needs nothing of the kind;
- `RUNNER_MEMORY_CGROUP=/sys/fs/cgroup/...`: under that directory; `off`: none (the watch then counts from
  /proc, `runner/host/held_memory.py`).

Each job's cgroup has a hard ceiling above the job's limit (`ceiling_bytes`): the runner's watch decides the
verdict at the limit from the anonymous and shared-memory pages the cgroup holds, and the ceiling, which also
counts reclaimable file cache and kernel memory, is there for what a poll could miss.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DAEMON_SUBGROUP = "daemon"
JOB_PREFIX = "arena-job-"
CEILING_HEADROOM_MIN = 256 << 20
_REMOVE_TRIES = 50
_REMOVE_PAUSE_S = 0.02


class CgroupError(RuntimeError):
    """A job's cgroup could not be made or filled; the message names the path and what to change."""


def ceiling_bytes(limit: int) -> int:
    """The kernel's hard limit for a job whose watched limit is `limit`: a quarter more, at least 256 MiB more,
    for file cache and kernel memory that the watch does not count."""
    return limit + max(limit // 4, CEILING_HEADROOM_MIN)


@dataclass(frozen=True)
class JobCgroups:
    """Where this runner makes its jobs' memory cgroups: a directory it may write, of cgroup `version` 1 or 2."""

    parent: Path
    version: int

    def create(self, limit: int) -> JobCgroup:
        """A fresh cgroup for one process tree, its ceiling set from `limit` (bytes). Blocking."""
        path = self.parent / f"{JOB_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir(mode=0o755)
        except OSError as exc:
            raise CgroupError(f"cannot make the job cgroup {path}: {exc.strerror}") from exc
        group = JobCgroup(path, self.version)
        try:
            group.set_ceiling(ceiling_bytes(limit))
        except BaseException:
            group.remove()
            raise
        return group

    def remove_stale(self) -> None:
        """Remove the empty job cgroups of runner processes that died (a busy one stays)."""
        with contextlib.suppress(OSError):
            for child in self.parent.iterdir():
                owner = child.name.removeprefix(JOB_PREFIX).split("-", 1)[0]
                if child.name.startswith(JOB_PREFIX) and owner.isdigit() and not _alive(int(owner)):
                    with contextlib.suppress(OSError):
                        child.rmdir()


@dataclass(frozen=True)
class JobCgroup:
    """One job's memory cgroup. The spawning child joins it before it execs (`join_self`)."""

    path: Path
    version: int

    def set_ceiling(self, ceiling: int) -> None:
        if self.version == 2:
            _write(self.path / "memory.max", str(ceiling))
            _write_optional(self.path / "memory.swap.max", "0")  # no escape into swap
            _write_optional(self.path / "memory.oom.group", "1")  # an OOM kill takes the whole job
        else:
            _write(self.path / "memory.limit_in_bytes", str(ceiling))
            _write_optional(self.path / "memory.memsw.limit_in_bytes", str(ceiling))

    def open_procs(self) -> int:
        """A descriptor of `cgroup.procs`, opened ahead so that the forked child only has to write to it."""
        return os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)

    def held_bytes(self) -> int:
        """The anonymous and shared-memory (memfd, SysV, POSIX shm, tmpfs) bytes charged to the cgroup: what
        the job holds, without the file cache it may drop. 0 when the cgroup is gone."""
        stat = _stat_fields(self.path / "memory.stat")
        if self.version == 2:
            return stat.get("anon", 0) + stat.get("shmem", 0) + stat.get("swap", 0)
        return stat.get("rss", 0) + stat.get("shmem", 0) + stat.get("swap", 0)

    def oom_kills(self) -> int:
        """How many processes the kernel killed for passing the ceiling."""
        events = self.path / ("memory.events" if self.version == 2 else "memory.oom_control")
        return _stat_fields(events).get("oom_kill", 0)

    def kill_all(self) -> None:
        """SIGKILL to every process in the cgroup (v2: `cgroup.kill`, one write)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(self.path / "cgroup.kill", "1")
                return
        with contextlib.suppress(OSError):
            for line in (self.path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                    os.kill(int(line), signal.SIGKILL)

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (it is busy until the last exits). Blocking."""
        for _ in range(_REMOVE_TRIES):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill_all()
                time.sleep(_REMOVE_PAUSE_S)
        log.warning("the job cgroup %s is still busy; a later runner start removes it", self.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def join_self(procs_fd: int) -> None:
    """In the forked child before exec: move this process into the cgroup ("0" means the writer)."""
    os.write(procs_fd, b"0")


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def _write_optional(path: Path, text: str) -> None:
    """A knob this kernel may lack (no swap accounting, an older kernel)."""
    if path.exists():
        with contextlib.suppress(OSError):
            _write(path, text)


def _stat_fields(path: Path) -> dict[str, int]:
    fields: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                fields[parts[0]] = int(parts[1])
    return fields


@dataclass(frozen=True)
class _Mount:
    point: Path
    root: str  # the hierarchy's path that is mounted there


def _cgroup_mounts() -> tuple[_Mount | None, _Mount | None]:
    """(the cgroup v2 mount, the cgroup v1 memory mount) of this process's mount namespace."""
    v2 = v1 = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            mount = _Mount(Path(fields[4].replace("\\040", " ")), fields[3])
            if tail[0] == "cgroup2" and v2 is None:
                v2 = mount
            elif tail[0] == "cgroup" and "memory" in tail[2].split(",") and v1 is None:
                v1 = mount
    return v2, v1


def _own_cgroups() -> tuple[str | None, str | None]:
    """(this process's v2 cgroup path, its v1 memory cgroup path), as /proc/self/cgroup names them."""
    v2 = v1 = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            number, controllers, path = line.split(":", 2)
            if number == "0" and controllers == "":
                v2 = path
            elif "memory" in controllers.split(","):
                v1 = path
    return v2, v1


def _directory(mount: _Mount, path: str) -> Path | None:
    """Where a hierarchy path lies under its mount; None when the mount does not show it."""
    root = mount.root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    return mount.point / path[len(root) :].lstrip("/")


def _controllers(directory: Path, name: str) -> list[str]:
    try:
        return (directory / name).read_text().split()
    except OSError:
        return []


def _probe(parent: Path, version: int) -> JobCgroups | None:
    """The cgroups, if a child with a memory limit can be made under `parent` here."""
    cgroups = JobCgroups(parent, version)
    try:
        cgroups.create(256 << 20).remove()
    except (CgroupError, OSError) as exc:
        log.info("no per-job memory cgroups under %s: %s", parent, exc)
        return None
    return cgroups


def _enable_memory(directory: Path) -> bool:
    if "memory" in _controllers(directory, "cgroup.subtree_control"):
        return True
    try:
        _write(directory / "cgroup.subtree_control", "+memory")
    except OSError as exc:
        log.info("cannot enable the memory controller for the children of %s: %s", directory, exc.strerror)
        return False
    return True


def _delegated(directory: Path) -> bool:
    """Whether `directory` is this runner's to divide: it owns the directory and may move processes into it (as
    root, that is any cgroup: the unit in `deploy/systemd` delegates its own with Delegate=yes)."""
    try:
        owned = directory.stat().st_uid == os.geteuid() and os.access(directory / "cgroup.procs", os.W_OK)
    except OSError:
        return False
    return owned


def _v2_parent(mount: _Mount, own_path: str) -> Path | None:
    own = _directory(mount, own_path)
    if own is None or not own.is_dir() or "memory" not in _controllers(own, "cgroup.controllers"):
        return None
    if own.name == DAEMON_SUBGROUP and _delegated(own.parent) and _enable_memory(own.parent):
        return own.parent  # the unit's layout: the daemon in <unit>/daemon, its jobs beside it
    if not _delegated(own):
        return None
    daemon = own / DAEMON_SUBGROUP
    try:
        daemon.mkdir(mode=0o755, exist_ok=True)
        _write(daemon / "cgroup.procs", "0")
    except OSError as exc:
        log.info("cannot move the runner into %s: %s", daemon, exc.strerror)
        return None
    if _enable_memory(own):
        log.info("the runner moved itself into %s; jobs' cgroups go beside it", daemon)
        return own
    with contextlib.suppress(OSError):
        _write(own / "cgroup.procs", "0")  # other processes share our cgroup: leave it as it was
    return None


def find_job_cgroups(setting: str) -> JobCgroups | None:
    """Where this runner can make per-job memory cgroups (see the module docstring); None where it cannot.
    Blocking: it may make and remove a probe cgroup."""
    if setting == "off":
        return None
    if setting != "auto":
        parent = Path(setting)
        version = 2 if (parent / "cgroup.controllers").exists() else 1
        found = _probe(parent, version)
        if found is None:
            raise CgroupError(
                f"RUNNER_MEMORY_CGROUP={setting}: no job cgroup with a memory limit can be made there. Give a "
                "cgroup directory this runner may write (with the memory controller), or use auto or off."
            )
        return found
    v2_mount, v1_mount = _cgroup_mounts()
    v2_path, v1_path = _own_cgroups()
    if v2_mount is not None and v2_path is not None:
        parent = _v2_parent(v2_mount, v2_path)
        if parent is not None and (found := _probe(parent, 2)) is not None:
            return found
    if v1_mount is not None and v1_path is not None:
        own = _directory(v1_mount, v1_path)
        if own is not None and own.is_dir():
            return _probe(own, 1)
    return None
