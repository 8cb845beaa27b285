"""Read-only means read-only: the web's store (`open_reader_store`) refuses every write with a permission error and
still reads every page; `arena web` never migrates, and says in one line to run `arena db migrate` when the store's
schema is behind; a login of the web's own (ARENA_WEB_DATABASE_URL) acts as the read-only role too."""

from __future__ import annotations

import socket
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.errors import StoreNotReadyError
from core.settings import StoreSettings
from core.store.migrate import discover, migrate
from core.store.pool import READER_ROLE, open_reader_store
from tests.cli.harness import arena, arena_env, assert_one_line_error
from tests.web.conftest import web_settings
from tests.web.web_helpers import Seeded, seed
from web.app import create_app

WRITES = [
    "INSERT INTO users (external_id, display_name) VALUES ('web:mallory', 'Mallory')",
    "UPDATE users SET display_name = 'Mallory'",
    "DELETE FROM ratings",
    "UPDATE contests SET start_warning_at = now()",
    "CREATE TABLE web_notes (note text)",
]


async def _applied(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
        return await conn.fetchval("SELECT count(*) FROM schema_migrations") if exists else 0
    finally:
        await conn.close()


@pytest.mark.parametrize("statement", WRITES)
async def test_a_write_through_the_webs_pool_fails_with_a_permission_error(
    pool: asyncpg.Pool, db_dsn: str, statement: str
) -> None:
    await seed(pool)
    async with open_reader_store(StoreSettings(database_url=db_dsn)) as store:
        assert await store.pool.fetchval("SELECT current_user") == READER_ROLE
        assert await store.pool.fetchval("SELECT count(*) FROM users") > 0
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
            await store.pool.execute(statement)
        async with store.pool.acquire() as conn:
            # The role is the session's default: resetting it, or every setting, gives no write back.
            await conn.execute("RESET ROLE; RESET ALL")
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(statement)
    assert await pool.fetchval("SELECT count(*) FROM users WHERE external_id = 'web:mallory'") == 0


async def test_every_page_reads_through_the_webs_own_store(pool: asyncpg.Pool, db_dsn: str) -> None:
    seeded: Seeded = await seed(pool)
    bob_run = seeded.ranked["bob"]
    app = create_app(web_settings(db_dsn))  # opens its store itself when the server starts, as `arena web` does
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        for path in ("/", "/problems/vector_add", "/contests", "/ratings", f"/submissions/{bob_run}", "/healthz"):
            response = await client.get(path)
            assert response.status == 200, (path, await response.text())
        assert "bob" in await (await client.get("/problems/vector_add")).text()


@pytest.fixture
async def web_login(pg_dsn: str, db_dsn: str) -> AsyncIterator[str]:
    """A login of the web's own that may take the read-only role and nothing more (no superuser behind it)."""
    name, password = f"arena_web_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = await asyncpg.connect(pg_dsn)
    try:
        await admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' IN ROLE {READER_ROLE}")
        parts = urllib.parse.urlsplit(db_dsn)
        server = parts.netloc.rsplit("@", 1)[-1]
        yield urllib.parse.urlunsplit(parts._replace(netloc=f"{name}:{password}@{server}"))
    finally:
        await admin.execute(f"DROP ROLE IF EXISTS {name}")
        await admin.close()


async def test_a_login_of_the_webs_own_reads_and_cannot_take_another_role(
    pool: asyncpg.Pool, db_dsn: str, web_login: str
) -> None:
    await seed(pool)
    settings = web_settings(db_dsn, database_url=web_login)
    async with open_reader_store(settings.reader_store()) as store:
        assert await store.pool.fetchval("SELECT session_user") != await pool.fetchval("SELECT session_user")
        assert await store.pool.fetchval("SELECT count(*) FROM problems") > 0
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.pool.execute(WRITES[0])
        owner = await pool.fetchval("SELECT current_user")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.pool.execute(f'SET ROLE "{owner}"')


async def test_the_webs_store_never_migrates_and_says_to_run_arena_db_migrate(empty_dsn: str) -> None:
    with pytest.raises(StoreNotReadyError, match=r"has no schema yet.*Run `arena db migrate`"):
        async with open_reader_store(StoreSettings(database_url=empty_dsn)):
            pass
    assert await _applied(empty_dsn) == 0

    conn = await asyncpg.connect(empty_dsn)
    try:
        shipped = discover()
        await migrate(conn, shipped[:-1])
    finally:
        await conn.close()
    last = shipped[-1]
    with pytest.raises(StoreNotReadyError, match=f"migration V{last.version:03d} \\({last.reason}\\) is not applied"):
        async with open_reader_store(StoreSettings(database_url=empty_dsn)):
            pass
    assert await _applied(empty_dsn) == len(shipped) - 1


async def test_arena_web_on_a_store_behind_its_code_says_so_in_one_line_and_migrates_nothing(
    empty_dsn: str, tmp_path: Path
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = arena_env(tmp_path / "pg", DATABASE_URL=empty_dsn)
    proc = arena("web", "--port", str(port), env=env, timeout=120)
    assert_one_line_error(proc, "has no schema yet, and the web never migrates", "arena db migrate", status=1)
    assert await _applied(empty_dsn) == 0


@pytest.fixture
async def restricted_store(pg_dsn: str) -> AsyncIterator[tuple[str, str]]:
    """A database owned by a login that may neither create roles nor grant the read-only role: (its DSN, the
    login's name)."""
    name, password = f"arena_owner_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    database = f"arena_restricted_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(pg_dsn)
    try:
        await admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' NOCREATEROLE NOSUPERUSER")
        await admin.execute(f"CREATE DATABASE {database} OWNER {name}")
        parts = urllib.parse.urlsplit(pg_dsn)
        server = parts.netloc.rsplit("@", 1)[-1]
        yield urllib.parse.urlunsplit(parts._replace(netloc=f"{name}:{password}@{server}", path=f"/{database}")), name
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.execute(f"DROP ROLE IF EXISTS {name}")
        await admin.close()


async def test_a_user_without_createrole_still_migrates_and_the_web_names_what_the_owner_runs(
    template_db: str, restricted_store: tuple[str, str]
) -> None:
    dsn, user = restricted_store  # template_db: the read-only role exists on this server, made by another database
    conn = await asyncpg.connect(dsn)
    try:
        applied = await migrate(conn)
    finally:
        await conn.close()
    assert [m.version for m in applied] == [m.version for m in discover()]
    with pytest.raises(StoreNotReadyError) as refused:
        async with open_reader_store(StoreSettings(database_url=dsn)):
            pass
    message = str(refused.value)
    assert f"does not let `{user}` act as `{READER_ROLE}`" in message
    assert f"GRANT {READER_ROLE} TO {user}" in message
