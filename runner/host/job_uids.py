"""The block of uids a root daemon's jobs run as: slot i's jobs run as the block's first uid + i.

Several daemons on one host (one per GPU, as a two-GPU host runs them) must not share job uids: RLIMIT_NPROC counts
a uid's tasks across the whole host, so one daemon's jobs would use up another's, and where no pid namespace ends a
job's leftovers they are reaped by killing everything its uid runs, another daemon's job too. Each process claims
the first free block of UIDS_PER_RUNNER uids from RUNNER_SANDBOX_UID up, by a lock on a file that the kernel
releases when the process ends, and keeps it for its life.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

UIDS_PER_RUNNER = 64
"""Uids in one daemon's block: its slots (a host's GPUs and its CPU slots) number fewer."""
MAX_RUNNERS = 64
"""Blocks tried above the configured first uid before giving up."""

# The claims of this process: configured first uid -> (claimed first uid, the locked file's descriptor, kept open).
_held: dict[int, tuple[int, int]] = {}


class JobUidsTakenError(RuntimeError):
    """Every block of job uids is held by another daemon on this host."""


def lock_directory() -> Path | None:
    """Where the claims' lock files live: a directory only root may write (jobs must not hold a block's lock), in
    /run/lock where there is one, else the temporary directory. None where no such directory can be had."""
    parent = Path("/run/lock")
    if not (parent.is_dir() and os.access(parent, os.W_OK)):
        parent = Path(tempfile.gettempdir())
    directory = parent / "kernel-arena-job-uids"
    try:
        directory.mkdir(mode=0o755, exist_ok=True)
        info = directory.lstat()
    except OSError as exc:
        log.warning("cannot make %s (%s): job uids are not claimed", directory, exc)
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        log.warning("%s is not a directory only root may write: job uids are not claimed", directory)
        return None
    return directory


def claim_uid_base(configured: int, directory: Path | None = None) -> int:
    """The first uid of this process's block: `configured` unless another process on this host holds that block,
    then the next free one. The same answer for every call in one process. Raises JobUidsTakenError when
    MAX_RUNNERS blocks are all held."""
    held = _held.get(configured)
    if held is not None:
        return held[0]
    directory = directory or lock_directory()
    if directory is None:
        return configured
    for block in range(MAX_RUNNERS):
        base = configured + block * UIDS_PER_RUNNER
        fd = os.open(directory / f"{base}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held[configured] = (base, fd)
        if block:
            log.info("job uids %d-%d are another runner's on this host; this runner's jobs run as %d-%d", configured,
                     configured + UIDS_PER_RUNNER - 1, base, base + UIDS_PER_RUNNER - 1)  # fmt: skip
        return base
    raise JobUidsTakenError(
        f"{MAX_RUNNERS} runners on this host already hold every block of job uids from {configured}; stop one, or "
        "give this one another RUNNER_SANDBOX_UID."
    )
