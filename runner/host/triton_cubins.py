"""Finds the cubins Triton compiled for a job, in the launcher's Triton cache, and copies them out for the precision
audit (`runner/job/precision_audit.py`), which reads their SASS with cuobjdump in a sandbox.

The launcher's TRITON_CACHE_DIR is `<scratch>/cache/triton` (`runner.host.sandbox.TRITON_CACHE_PARTS`): one folder
per compiled kernel, `<hash>/<kernel>.cubin` beside its `.json` and `.ptx`. With the full sandbox the scratch is a
tmpfs of the launcher's own mount namespace, which the host reaches through `/proc/<pid>/root` of a process inside
it (as `runner/host/held_memory.py` does); with less isolation it is the host's folder itself.

Everything in that cache was written by the submission's process, so nothing there is trusted: each step of the
path is opened without following a symbolic link, only regular files with a single link are read (no link to a
file of the host), and what is read is bounded: at most `MAX_ENTRIES` folder entries looked at, `MAX_CUBINS` files
of at most `MAX_CUBIN_BYTES` each. A cubin past a bound is counted as unread, never guessed at.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.host.sandbox import TRITON_CACHE_PARTS

log = logging.getLogger(__name__)

# A job compiles a handful of kernels (one per specialisation: an autotuned kernel a few more); these bounds are
# far above that, and keep a cache of decoys from costing the daemon more than a second or two.
MAX_CUBINS = 64
MAX_CUBIN_BYTES = 8 << 20  # Triton's cubins are tens to hundreds of KiB
MAX_ENTRIES = 4096
CUBIN_SUFFIX = ".cubin"
COPY_PREFIX = "triton-"

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO named *.cubin must not block the daemon's open.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class CacheUnreadableError(Exception):
    """The launcher's Triton cache exists but cannot be read (no access to its root, or not a plain folder)."""


@dataclass(frozen=True)
class CacheLocation:
    """Where the cache is, as the host sees it: `base` (a folder the daemon trusts, or a process's
    `/proc/<pid>/root`) and the path's parts below it, each opened without following links."""

    base: str
    parts: tuple[str, ...]

    @classmethod
    def on_host(cls, job_root: Path) -> CacheLocation:
        """The cache of a job whose scratch is the host's folder (no mount namespace). The job's uid owns its
        root, so every step below it is the submission's to replace."""
        return cls(str(job_root), ("scratch", *TRITON_CACHE_PARTS))

    @classmethod
    def inside(cls, pid: int, scratch: Path) -> CacheLocation:
        """The cache on the scratch tmpfs that process `pid` sees inside its sandbox's root."""
        return cls(f"/proc/{pid}/root", (*scratch.parts[1:], *TRITON_CACHE_PARTS))


def sandbox_location(pids: Iterable[int], scratch: Path) -> CacheLocation | None:
    """The cache as the first of `pids` that lives inside its own root sees it; None when none does (the launcher
    is gone, or its root cannot be looked at)."""
    try:
        host_root = os.stat("/")
    except OSError:
        return None
    for pid in pids:
        try:
            seen = os.stat(f"/proc/{pid}/root/")
        except OSError:
            continue
        if (seen.st_dev, seen.st_ino) != (host_root.st_dev, host_root.st_ino):
            return CacheLocation.inside(pid, scratch)
    return None


@dataclass(frozen=True)
class CopiedCubins:
    """The cubins copied out (`triton-NNN.cubin` in the destination folder) and how many were left unread."""

    files: list[Path]
    unread: int = 0


def copy_cubins(location: CacheLocation, dest: Path) -> CopiedCubins | None:
    """Copy the cache's cubins into `dest` (a folder of the daemon's); None when there is no cache (no Triton
    kernel was compiled). Blocking: call it through a thread. Raises CacheUnreadableError."""
    cache = _open_cache(location)
    if cache is None:
        return None
    files: list[Path] = []
    unread = 0
    try:
        for folder, name in _cubin_names(cache):
            if len(files) >= MAX_CUBINS:
                unread += 1
                continue
            data = _read_cubin(folder, name)
            if data is None:
                unread += 1
                continue
            target = dest / f"{COPY_PREFIX}{len(files):03d}{CUBIN_SUFFIX}"
            target.write_bytes(data)
            os.chmod(target, 0o644)  # read by cuobjdump as the job's uid
            files.append(target)
    finally:
        os.close(cache)
    if unread:
        log.info("precision audit: %d Triton cubin(s) past the audit's bounds, not read", unread)
    return CopiedCubins(files, unread)


def _open_cache(location: CacheLocation) -> int | None:
    try:
        # The base may be a process's root: the one link that must be followed.
        fd = os.open(location.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise CacheUnreadableError("the launcher's process is gone") from None
    except OSError as exc:
        raise CacheUnreadableError(f"its root cannot be opened ({errno.errorcode.get(exc.errno or 0, exc)})") from exc
    for part in location.parts:
        try:
            step = os.open(part, _DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError as exc:
            os.close(fd)
            # ELOOP / ENOTDIR: a link or a file where a folder belongs, which only the submission could have put.
            why = errno.errorcode.get(exc.errno or 0, str(exc))
            raise CacheUnreadableError(f"the Triton cache's path cannot be opened as a folder ({why})") from exc
        os.close(fd)
        fd = step
    return fd


def _cubin_names(cache: int) -> Iterator[tuple[int, str]]:
    """(folder fd, file name) of each `*.cubin` one level down, in name order, within `MAX_ENTRIES` entries in
    all. The folder's fd stays open until the next folder is reached."""
    budget = MAX_ENTRIES
    folders = _listing(cache, budget)
    budget -= len(folders)
    for folder in folders:
        if budget <= 0:
            return
        try:
            folder_fd = os.open(folder, _DIRECTORY, dir_fd=cache)
        except OSError:
            continue  # a file or a link at the top level: not a kernel's folder
        try:
            names = _listing(folder_fd, budget)
            budget -= len(names)
            for name in names:
                if name.endswith(CUBIN_SUFFIX):
                    yield folder_fd, name
        finally:
            os.close(folder_fd)


def _listing(fd: int, limit: int) -> list[str]:
    """At most `limit` names of the folder open on `fd`, sorted (scandir reads a duplicate of `fd`)."""
    names: list[str] = []
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            if len(names) >= limit:
                break
            names.append(entry.name)
    return sorted(names)


def _read_cubin(folder: int, name: str) -> bytes | None:
    """The file's bytes when it is a regular file of one link within `MAX_CUBIN_BYTES`; None otherwise."""
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_size > MAX_CUBIN_BYTES:
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_CUBIN_BYTES and (chunk := os.read(fd, MAX_CUBIN_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if 0 < size <= MAX_CUBIN_BYTES else None  # it may have grown since fstat
    except OSError:
        return None
    finally:
        os.close(fd)
