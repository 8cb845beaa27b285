"""What a job holds besides its processes' resident pages, counted from /proc where no cgroup counts it.

RssAnon + RssShmem miss shared memory that no process maps: a memfd written with write() and never mapped, a
SysV segment once detached, a file on a tmpfs. Without a job cgroup (`runner/host/memory_cgroup.py`) the
watch adds these, each object once:
- memfds: every `/memfd:` a process of the job holds open (its size by fstat through /proc/<pid>/fd/N) or maps
  (through /proc/<pid>/map_files, where the runner may read it: as root);
- the job's tmpfs mounts (/tmp, /dev/shm and the scratch folder of the full sandbox): their used blocks, as
  statvfs sees them through /proc/<pid>/root; deleted files still open count too;
- SysV shared memory of the job's own IPC namespace: the sandbox's init opens /proc/sysvipc/shm inside it and
  hands the descriptor to the runner (such a file lists the namespace it was opened in, whoever reads it).
The exact count that decides a kill takes each page once: a mapping of an object counted here is taken out of
the process's proportional count (per mapping, from /proc/<pid>/smaps).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# The folders of the full sandbox that are tmpfs mounts of the job's own (`runner/host/sandbox_init.py`).
JOB_TMPFS = ("/tmp", "/dev/shm")


@dataclass
class HeldObjects:
    """Shared-memory objects a job holds, each once, and their bytes."""

    bytes: int = 0
    memfds: set[tuple[int, int]] = field(default_factory=set)  # (st_dev, st_ino)
    tmpfs_devices: set[int] = field(default_factory=set)
    sysv: bool = False

    def covers(self, device: int, inode: int, path: bytes) -> bool:
        """Whether a mapping of (device, inode, path) is of an object counted here."""
        if (device, inode) in self.memfds or device in self.tmpfs_devices:
            return True
        return self.sysv and path.startswith(b"/SYSV")


def held_objects(
    pids: Iterable[int], sandboxed: Sequence[int], tmpfs_paths: Sequence[str], sysv_fd: int | None
) -> HeldObjects:
    """The memfds of `pids`, the tmpfs mounts `tmpfs_paths` as a process of `sandboxed` (inside the job's root)
    sees them, and the SysV segments listed by `sysv_fd`."""
    held = HeldObjects()
    for pid in pids:
        _add_memfds(held, pid)
    for pid in sandboxed:
        if _add_tmpfs(held, pid, tmpfs_paths):
            break
    if sysv_fd is not None:
        sysv = sysv_bytes(sysv_fd)
        if sysv is not None:
            held.bytes += sysv
            held.sysv = True
    return held


def _add_memfds(held: HeldObjects, pid: int) -> None:
    fd_dir = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for name in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                if os.readlink(f"{fd_dir}/{name}").startswith("/memfd:"):
                    _add_memfd(held, os.stat(f"{fd_dir}/{name}"))
    with contextlib.suppress(OSError), open(f"/proc/{pid}/maps", "rb") as fh:
        for line in fh:
            if b"/memfd:" not in line:
                continue
            fields = line.split(None, 5)
            key = (_device(fields[3]), int(fields[4]))
            if key in held.memfds:
                continue
            with contextlib.suppress(OSError):  # map_files needs CAP_SYS_ADMIN: root only
                _add_memfd(held, os.stat(f"/proc/{pid}/map_files/{fields[0].decode()}"))


def _add_memfd(held: HeldObjects, st: os.stat_result) -> None:
    key = (st.st_dev, st.st_ino)
    if key not in held.memfds:
        held.memfds.add(key)
        held.bytes += st.st_blocks * 512  # allocated pages, not the size a sparse ftruncate claims


def _add_tmpfs(held: HeldObjects, pid: int, paths: Sequence[str]) -> bool:
    """Count each tmpfs as `pid` sees it; False where its root cannot be read (gone, or not set up yet)."""
    root = f"/proc/{pid}/root"
    try:
        host_root = os.stat("/")
        seen = os.stat(root + "/")
    except OSError:
        return False
    if (seen.st_dev, seen.st_ino) == (host_root.st_dev, host_root.st_ino):
        return False  # not inside the job's root yet: these paths would be the host's own
    for path in paths:
        try:
            device = os.stat(root + path).st_dev
            fs = os.statvfs(root + path)
        except OSError:
            continue
        if device not in held.tmpfs_devices:
            held.tmpfs_devices.add(device)
            held.bytes += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
    return True


def sysv_bytes(fd: int) -> int | None:
    """The resident and swapped bytes of the SysV segments that /proc/sysvipc/shm, open on `fd`, lists."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = b""
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    except OSError:
        return None
    lines = data.splitlines()
    if not lines:
        return None
    header = lines[0].split()
    columns = [header.index(name) for name in (b"rss", b"swap") if name in header] or [header.index(b"size")]
    total = 0
    for line in lines[1:]:
        fields = line.split()
        with contextlib.suppress(ValueError, IndexError):
            total += sum(int(fields[column]) for column in columns)
    return total


def _device(text: bytes) -> int:
    major, minor = text.split(b":")
    return os.makedev(int(major, 16), int(minor, 16))


def mapped_object_bytes(pid: int, held: HeldObjects) -> int:
    """The proportional bytes `pid` maps of objects `held` counts already: the part of its shared-memory count
    that would count them twice."""
    total, covered = 0, False
    with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/smaps", "rb") as fh:
        for line in fh:
            first = line.split(None, 1)[0] if line.strip() else b""
            if b"-" in first and not first.endswith(b":"):  # a mapping's header line
                fields = line.split(None, 5)
                path = fields[5].strip() if len(fields) > 5 else b""
                covered = held.covers(_device(fields[3]), int(fields[4]), path)
            elif covered and first == b"Pss:":
                total += int(line.split()[1]) * 1024
    return total
