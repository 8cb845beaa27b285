"""A real PostgreSQL for the store tests, never a mock.

The server is DATABASE_URL when set (a CI service), else one embedded server for the whole session. The
migrations are applied once, to a template database; every test gets its own copy of it (CREATE DATABASE ...
TEMPLATE is a file copy, tens of milliseconds), so tests are isolated and may commit, run concurrent
transactions and LISTEN, as the bot does.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from core.store.embedded import start_embedded
from core.store.migrate import migrate
from core.store.pool import create_pool, with_database


async def _admin(dsn: str, *statements: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
async def pg_dsn() -> AsyncIterator[str]:
    """The DSN of a server on which the tests may create databases."""
    configured = StoreSettings().database_url
    if configured is not None:
        yield configured.get_secret_value()
        return
    # Not under pytest's basetemp: pytest prunes old numbered temp dirs, which would pull the data directory
    # from under a server that outlives them.
    root = Path(tempfile.mkdtemp(prefix="arena-store-tests-"))
    server = await start_embedded(root / "pgdata")
    try:
        await _unsynced(server.dsn())
        yield server.dsn()
    finally:
        # A connection some test leaked (a dispatcher's listener, a pool never closed) would keep a smart
        # shutdown waiting for ever, and the session with it: end every other session first.
        await _end_other_sessions(server.dsn())
        await server.stop()
        shutil.rmtree(root, ignore_errors=True)


async def _unsynced(dsn: str) -> None:
    """A throwaway server need not survive a power cut: without its fsyncs a test database's CREATE and DROP went
    from 0.12 s to 0.08 s on a 2-core machine, and every commit of every test is cheaper. A killed server still
    recovers (the data is in the host's page cache), which the fault tests, on servers of their own, rely on."""
    conn = await asyncpg.connect(dsn, timeout=30)
    try:
        for name in ("fsync", "synchronous_commit", "full_page_writes"):
            await conn.execute(f"ALTER SYSTEM SET {name} = off")
        await conn.execute("SELECT pg_reload_conf()")
    finally:
        await conn.close()


async def _end_other_sessions(dsn: str) -> None:
    try:
        conn = await asyncpg.connect(dsn, timeout=30)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return
    try:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
    finally:
        await conn.close()


@pytest.fixture(scope="session")
async def template_db(pg_dsn: str) -> AsyncIterator[str]:
    name = f"arena_tpl_{uuid.uuid4().hex[:10]}"
    await _admin(pg_dsn, f"CREATE DATABASE {name}")
    conn = await asyncpg.connect(with_database(pg_dsn, name))
    try:
        await migrate(conn)
    finally:
        await conn.close()
    yield name
    await _admin(pg_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
async def empty_dsn(pg_dsn: str) -> AsyncIterator[str]:
    """A new database with nothing in it (for the migration tests)."""
    name = f"arena_empty_{uuid.uuid4().hex[:10]}"
    await _admin(pg_dsn, f"CREATE DATABASE {name}")
    yield with_database(pg_dsn, name)
    await _admin(pg_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
async def db_dsn(pg_dsn: str, template_db: str) -> AsyncIterator[str]:
    """A new database with the schema applied, dropped after the test."""
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    await _admin(pg_dsn, f"CREATE DATABASE {name} TEMPLATE {template_db}")
    yield with_database(pg_dsn, name)
    await _admin(pg_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
async def pool(db_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    async with create_pool(db_dsn, min_size=1, max_size=10, command_timeout=30) as created:
        yield created


@pytest.fixture
def settings(db_dsn: str) -> Settings:
    """Short leases and no back-off, so that retries and takeovers happen within a test; roomy rate limits."""
    return Settings(
        store=StoreSettings(database_url=db_dsn),
        dispatch=DispatchSettings(
            owner="test-dispatcher", lease_s=5.0, max_attempts=3, retry_backoff_s=0.0, poll_s=0.1
        ),
        rate=RateLimitSettings(test_burst=1000, benchmark_burst=1000, ranked_burst=1000, profile_burst=1000),
        local_user="tester",
    )
