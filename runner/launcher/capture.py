"""What the solution prints: its file descriptors 1 and 2 go to capture files of their own, read back per phase.

The launcher's channel to the judge is a socket on another descriptor, so nothing the solution writes (Python's
`print`, C's `printf` in a CUDA file's host code, a device `printf` flushed by the driver) can reach it or pass
for a reply. The files are opened with O_APPEND before the submission is imported, and kept open here under
descriptors of their own: `take` reads each one's first bytes and size through those, then empties it for the
next phase, whatever the solution did to descriptors 1 and 2 meanwhile. A flood costs disk, not memory, and the
sandbox's file-size limit bounds it; only `keep` bytes of each stream travel back. Both streams are line-buffered,
and the judge holds the same files (their descriptors sent over the channel): when the launcher dies, the judge
reads what it printed up to then itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO


@dataclass(frozen=True)
class Printed:
    """One stream's first bytes since the last `take`, and how many more it wrote."""

    text: str
    cut_bytes: int


def _libc_fflush() -> object | None:
    """C's `fflush`, bound before the submission loads: C stdio buffers a file's output fully, so a CUDA
    solution's `printf` would otherwise stay in the process until it exits."""
    try:
        fflush = ctypes.CDLL(None).fflush
    except (OSError, AttributeError):
        return None
    fflush.argtypes = [ctypes.c_void_p]
    fflush.restype = ctypes.c_int
    return fflush


_IOLBF = 1  # glibc's value for setvbuf's line-buffered mode


def _line_buffer_c_stdout() -> None:
    """C's stdout line-buffered: a file would otherwise be fully buffered, and lost with a crash."""
    try:
        libc = ctypes.CDLL(None)
        stdout = ctypes.c_void_p.in_dll(libc, "stdout")
        libc.setvbuf.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t]
        libc.setvbuf(stdout, None, _IOLBF, 0)
    except (OSError, AttributeError, ValueError):
        return


class OutputCapture:
    """Descriptors 1 and 2 redirected to `<folder>/stdout` and `<folder>/stderr`; the launcher's own log keeps
    the process's original stderr (`log_stream`)."""

    def __init__(self, folder: Path, keep: int) -> None:
        self.keep = keep
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        self._files = (os.open(folder / "stdout", flags, 0o600), os.open(folder / "stderr", flags, 0o600))
        self._fflush = _libc_fflush()
        self._flush_python()
        original_stderr = os.dup(2)
        os.set_inheritable(original_stderr, False)
        self.log_stream: TextIO = os.fdopen(original_stderr, "w", buffering=1, encoding="utf-8", errors="replace")
        for target, file_fd in zip((1, 2), self._files, strict=True):
            os.dup2(file_fd, target)
        # Line by line, so that what was printed before a crash is in the files for the judge to read.
        with contextlib.suppress(Exception):
            sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        _line_buffer_c_stdout()

    @property
    def files(self) -> tuple[int, int]:
        """The capture files' own descriptors (stdout's, stderr's)."""
        return self._files

    def _flush_python(self) -> None:
        for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a stream the solution closed or replaced
                if stream is not None:
                    stream.flush()
        if self._fflush is not None:
            self._fflush(None)  # type: ignore[operator]

    def take(self) -> tuple[Printed, Printed]:
        """(stdout, stderr) written since the last take, each cut to `keep` bytes; the files start empty again."""
        self._flush_python()
        return self._read(self._files[0]), self._read(self._files[1])

    def _read(self, fd: int) -> Printed:
        size = os.fstat(fd).st_size
        data = os.pread(fd, min(size, self.keep), 0) if size else b""
        os.ftruncate(fd, 0)
        return Printed(data.decode("utf-8", "replace"), max(size - len(data), 0))
