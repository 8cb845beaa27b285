"""The timing protocol's version: a digest of the code that times a case and of the settings it times with.

Every result carries the version of the protocol that timed it (`SubmissionResult.protocol`). When the judge's
timing code or the service's measurement settings change, the version changes, and the boards mark the entries
timed under an older one until a moderator re-judges them (`arena moderate rejudge`). No anchor re-judges its
boards when its harness changes; this is what lets one tell which entries were measured alike.

The digest covers the files that decide a sample's time and which samples count (below), and the service's
`MeasureConfig()`. It reads the files as this installation has them, so a runner and the core of one release
agree. Imports nothing heavy: the core reads the current version without torch.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from contract.wire import MeasureConfig

RUNNER_ROOT = Path(__file__).resolve().parent
# What a sample's time and a case's statistics depend on: the launcher's side of each sample, the judge's timer,
# its case protocol and load reading, the input sets, and every timing method and criterion.
PROTOCOL_FILES: tuple[str, ...] = (
    "launcher/harness.py",
    "judge/judged_timer.py",
    "judge/case_protocol.py",
    "judge/host_load.py",
    "judge/case_buffers.py",
    "timing/*.py",
    "timing/methods/*.py",
)
PREFIX = "tp-"
DIGITS = 12


def protocol_files() -> list[Path]:
    """The files of the digest, in a fixed order."""
    found: set[Path] = set()
    for pattern in PROTOCOL_FILES:
        found.update(RUNNER_ROOT.glob(pattern))
    return sorted(found)


@lru_cache(maxsize=1)
def protocol_version() -> str:
    """`tp-` and 12 hex digits of SHA-256 over the protocol's files (names and bytes) and the service's settings."""
    digest = hashlib.sha256()
    for path in protocol_files():
        digest.update(path.relative_to(RUNNER_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    digest.update(MeasureConfig().model_dump_json().encode())
    return PREFIX + digest.hexdigest()[:DIGITS]
