"""The `arena` command line."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    # Nothing has been done yet: end at once, in one line, instead of a traceback through half-run imports.
    os.write(2, b"interrupted (Ctrl-C).\n")
    os._exit(130)


def _is_the_arena_program() -> bool:
    """Whether this process is `arena` (the console script, or `python -m arena` while it finds the package),
    rather than another program that imports the package (tests): only then may the package set signals."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.basename(first) == "arena"


# Ctrl-C while the interpreter imports the CLI's modules (a second or so on a busy machine) is answered like
# Ctrl-C later on. `arena.cli.main` puts Python's own handler back before it starts any work.
if _is_the_arena_program() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, interrupted_while_starting)
