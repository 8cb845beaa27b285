"""A profile's files written to a folder: profile.txt, profile.ncu-rep, the PTX and SASS."""

from __future__ import annotations

import sys
from pathlib import Path

from contract.wire import ProfileReport
from core.errors import UserFacingError


def save_artifacts(report: ProfileReport, folder: Path) -> list[Path]:
    """Write a profile's files (profile.txt, profile.ncu-rep, the PTX and SASS) into `folder`."""
    from core.views.profile import artifact_file_name, decode_artifact

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserFacingError(f"Cannot create {folder}: {exc.strerror}.") from exc
    written: list[Path] = []
    for artifact in report.artifacts:
        data = decode_artifact(artifact)
        path = folder / artifact_file_name(artifact)
        if data is None:
            print(f"  {artifact.name}: not valid base64, not written", file=sys.stderr)
            continue
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise UserFacingError(f"Cannot write {path}: {exc.strerror}.") from exc
        written.append(path)
    print(f"  wrote {', '.join(p.name for p in written) or 'no files'} to {folder}", file=sys.stderr)
    return written
