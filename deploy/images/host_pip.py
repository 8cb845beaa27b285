"""The host's pip configuration, carried into an image build (used by scripts/build-images.sh).

A build machine may point pip at local wheels and indexes (`find-links`, `file://` indexes, a constraints file),
through its config files or `PIP_*` variables. The image build's pip should use them too: that is where the CPU
build of torch lies on a machine that must not download the CUDA one. This module merges what `pip config list`
reports into one config file for the build, and names the local paths that config reads, so the build can mount
them read-only at the same place. Only the build stage sees them; the image keeps none.

    python3 deploy/images/host_pip.py config OUT   # write the merged config to OUT, print the paths to mount
    python3 deploy/images/host_pip.py wheel NAME VERSION   # print the local wheel of NAME==VERSION, if any
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

# Settings whose values name files or folders on this machine (URLs with file://, or plain paths).
PATH_KEYS = ("find-links", "index-url", "extra-index-url", "constraint", "requirement", "cert", "client-cert")
# Settings a build must not inherit: they would write into, or read from, places that exist only on the host.
DROPPED_KEYS = ("cache-dir", "log", "target", "prefix", "root", "user", "src", "config-file")


def host_settings(python: str = sys.executable) -> dict[tuple[str, str], str]:
    """What pip on this machine is configured with, as {(section, key): value}; variables count as `global`.

    Empty where pip cannot say (no pip, or no configuration)."""
    try:
        listed = subprocess.run(
            [python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=120, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    settings: dict[tuple[str, str], str] = {}
    for line in listed.splitlines():
        name, sep, quoted = line.partition("=")
        section, dot, key = name.rpartition(".")
        if not sep or not dot:
            continue
        section = "global" if section == ":env:" else section
        if key in DROPPED_KEYS:
            continue
        try:
            value = ast.literal_eval(quoted)
        except (ValueError, SyntaxError):
            value = quoted
        settings[(section, key)] = str(value)
    return settings


def local_paths(settings: dict[tuple[str, str], str]) -> list[str]:
    """The existing local files and folders that `settings` read, outermost first, without duplicates."""
    found: list[str] = []
    for (_, key), value in settings.items():
        if key not in PATH_KEYS:
            continue
        for item in value.split():
            path = item.removeprefix("file://")
            if os.path.isabs(path) and os.path.exists(path):
                # A file:// index is a folder of pages that link to files beside it: mount its parent too.
                found.append(
                    str(Path(path).parent) if item.startswith("file://") and path.endswith("/simple") else path
                )
    unique = sorted(set(found))
    return [p for p in unique if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in unique)]


def config_text(settings: dict[tuple[str, str], str]) -> str:
    """An INI file holding `settings`, one section after another."""
    sections: dict[str, list[str]] = {}
    for (section, key), value in settings.items():
        sections.setdefault(section, []).append(f"{key} = {value}")
    return "".join(f"[{name}]\n" + "\n".join(lines) + "\n" for name, lines in sections.items())


def local_wheel(settings: dict[tuple[str, str], str], name: str, version: str) -> Path | None:
    """A wheel of `name`==`version` in one of the configured find-links folders, or None."""
    prefix = f"{name.replace('-', '_')}-{version}-"
    for (_, key), value in settings.items():
        if key != "find-links":
            continue
        for item in value.split():
            folder = Path(item.removeprefix("file://"))
            if folder.is_dir():
                for wheel in sorted(folder.glob("*.whl")):
                    if wheel.name.startswith(prefix):
                        return wheel
    return None


def main(argv: list[str]) -> int:
    settings = host_settings()
    if len(argv) == 2 and argv[0] == "config":
        Path(argv[1]).write_text(config_text(settings), encoding="utf-8")
        sys.stdout.write("".join(f"{path}\n" for path in local_paths(settings)))
        return 0
    if len(argv) == 3 and argv[0] == "wheel":
        wheel = local_wheel(settings, argv[1], argv[2])
        if wheel is None:
            return 1
        sys.stdout.write(f"{wheel}\n")
        return 0
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
