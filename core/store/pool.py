"""The asyncpg pool, and `open_store`: embedded server or DATABASE_URL, migrations, pool, in that order.

`open_reader_store` is the store of a service that only reads (the web leaderboard): it never migrates, refuses a
schema that is behind the code, and its every connection acts as `READER_ROLE`, which may only read (migration V010).
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg

from core.errors import StoreNotReadyError, StoreUnavailableError
from core.settings import StoreSettings
from core.store.embedded import EmbeddedPostgres, start_embedded
from core.store.migrate import migrate, status

READER_ROLE = "arena_web_reader"
"""The role that may read every table and write none (created by migration V010)."""

log = logging.getLogger(__name__)


class Conn(Protocol):
    """What every function in `core.store` needs: satisfied by both `asyncpg.Pool` and `asyncpg.Connection`.

    Passing a Connection inside `conn.transaction()` composes several db functions into one transaction.
    """

    async def execute(self, query: str, *args: Any, timeout: float | None = None) -> str: ...

    async def executemany(self, command: str, args: Any, *, timeout: float | None = None) -> None: ...

    async def fetch(self, query: str, *args: Any, timeout: float | None = None) -> list[Any]: ...

    async def fetchrow(self, query: str, *args: Any, timeout: float | None = None) -> Any: ...

    async def fetchval(self, query: str, *args: Any, column: int = 0, timeout: float | None = None) -> Any: ...


async def init_connection(conn: asyncpg.Connection) -> None:
    """Decode jsonb into Python objects and back, on every pooled connection."""
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog", format="text")


class PooledConnection(asyncpg.Connection):
    """A pooled connection that remembers whether a borrower changed its session (LISTEN), so that giving it back
    costs a round trip to the server only then.

    asyncpg resets every connection it takes back (`UNLISTEN *`, `RESET ALL`, `CLOSE ALL`, advisory locks): a
    statement of its own, one round trip in four of a submission (bench/results/store_10m.md). The store's code
    changes no session state but the dispatcher's LISTEN: its settings are `SET LOCAL`, its advisory locks end with
    their transaction, its cursors live in one. asyncpg still rolls back an open transaction and drops the
    listener callbacks on every return (`Connection._reset`)."""

    _session_changed = False

    async def add_listener(self, channel: str, callback: Any) -> None:
        self._session_changed = True
        await super().add_listener(channel, callback)

    def mark_session_changed(self, changed: bool) -> bool:
        """Say whether the session differs from a fresh one now (`generic_plans`); returns what it was."""
        before, self._session_changed = self._session_changed, changed
        return before


@asynccontextmanager
async def generic_plans(conn: Conn) -> AsyncIterator[None]:
    """Run the block's statements on `conn` (a connection, not a pool) with the plans PostgreSQL keeps for each
    prepared statement, never planned again for the values.

    For a statement over arrays (`unnest($1::bigint[])`, the submit path's batches) PostgreSQL plans the values
    every time: its cached plan assumes 100 rows, so it always looks dearer than one planned for the batch in hand,
    and the submit path's statements cost more to plan than to run (at 10 million rows, the place of one job 1.75
    ms of server CPU a read planned each time, 0.30 ms with the kept plan; the checks 1.15 against 0.10 ms). Their
    plans are index lookups whatever the values. The setting is the session's until the block ends; a connection
    given back before that (its RESET failed) gets the pool's full reset (`reset_session`)."""
    mark = getattr(conn, "mark_session_changed", None)
    before = mark(True) if mark is not None else True
    await conn.execute("SET plan_cache_mode = force_generic_plan")
    yield
    await conn.execute("RESET plan_cache_mode")
    if mark is not None:
        mark(before)


async def reset_session(conn: asyncpg.Connection) -> None:
    """The pool's reset: asyncpg's full reset query for a connection whose session changed, nothing otherwise."""
    if getattr(conn, "_session_changed", True):
        await conn.execute(conn.get_reset_query())
        if isinstance(conn, PooledConnection):
            conn._session_changed = False


def create_pool(
    dsn: str, *, min_size: int = 2, max_size: int = 10, command_timeout: float = 60.0, role: str | None = None
) -> asyncpg.pool.Pool:
    """A pool to use with `async with`; sizes and the per-query timeout are explicit, never asyncpg's defaults.

    With `role`, every connection acts as that role from its start: the role is a startup setting, so it is the
    session's default, and neither the pool's reset between borrowers nor a `RESET ROLE` gives the login's rights
    back. A connection goes back to the pool with a full reset only when its session changed (`PooledConnection`)."""
    server_settings = {"application_name": "kernel-arena"}
    if role is not None:
        server_settings["role"] = role
    return asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        command_timeout=command_timeout,
        init=init_connection,
        reset=reset_session,
        connection_class=PooledConnection,
        server_settings=server_settings,
    )


def with_database(dsn: str, database: str) -> str:
    """The same server and credentials, another database (tests and benchmarks make their own)."""
    parts = urllib.parse.urlsplit(dsn)
    return urllib.parse.urlunsplit(parts._replace(path="/" + urllib.parse.quote(database)))


def describe_dsn(dsn: str) -> str:
    """Where a DSN points, without its password: `PostgreSQL at db.example:5432/arena`."""
    parts = urllib.parse.urlsplit(dsn)
    host = parts.hostname or urllib.parse.parse_qs(parts.query).get("host", ["local socket"])[0]
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"PostgreSQL at {host}{port}{parts.path or ''}"


async def connect(dsn: str, timeout: float, *, embedded: bool = False) -> asyncpg.Connection:
    """One connection, or StoreUnavailableError saying which server could not be reached and what to check."""
    try:
        return await asyncpg.connect(dsn, timeout=timeout)
    except CONNECT_ERRORS as exc:
        raise unreachable(dsn, exc, timeout, embedded=embedded) from exc


# What connecting raises when the server is down, unreachable, refuses us, or the DSN cannot be parsed.
CONNECT_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError)


def unreachable(dsn: str, exc: BaseException, timeout: float, *, embedded: bool = False) -> StoreUnavailableError:
    """The one-line error for a failed connection: which server, why, and what to check."""
    if isinstance(exc, ValueError) and not isinstance(exc, asyncpg.InterfaceError):
        # asyncpg's parsing of the DSN, e.g. a port that is not a number
        return StoreUnavailableError(
            f"DATABASE_URL is not a PostgreSQL URL that can be used ({exc}); write it as "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        )
    reason = str(exc) or (f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else type(exc).__name__)
    advice = (
        "Stop other arena commands using that data directory, or set DATABASE_URL to use another server."
        if embedded
        else "Check that the server is running and that DATABASE_URL is right, or unset DATABASE_URL to use the "
        "embedded PostgreSQL."
    )
    return StoreUnavailableError(f"Cannot connect to {describe_dsn(dsn)}: {reason}. {advice}")


@dataclass(frozen=True)
class Store:
    """An open store: the pool, the DSN it came from, and the embedded server when one was started."""

    pool: asyncpg.Pool
    dsn: str
    embedded: EmbeddedPostgres | None
    applied_migrations: Sequence[int]


async def resolve_dsn(settings: StoreSettings) -> tuple[str, EmbeddedPostgres | None]:
    """DATABASE_URL when set, else start (or join) the embedded server under `settings.data_dir`."""
    if settings.database_url is not None:
        return settings.database_url.get_secret_value(), None
    server = await start_embedded(settings.data_dir)
    return server.dsn(), server


# How long shutdown waits for borrowed connections to come back before cutting them.
POOL_CLOSE_TIMEOUT_S = 10.0


async def close_pool(pool: asyncpg.Pool, timeout_s: float = POOL_CLOSE_TIMEOUT_S) -> None:
    """Close gracefully, then by force: a task still holding a connection at shutdown (a command handler that
    is only cancelled after the bot's close) would otherwise keep the process alive forever."""
    try:
        await asyncio.wait_for(pool.close(), timeout_s)
    except TimeoutError:
        log.warning("connections were still borrowed after %.0f s at shutdown; closing them by force", timeout_s)
        pool.terminate()


@asynccontextmanager
async def open_store(settings: StoreSettings) -> AsyncIterator[Store]:
    """Connect (starting the embedded server if needed), apply pending migrations, and open the pool.

    Startup stops with the error if any step fails: a bot without its store must not take submissions.
    """
    dsn, server = await resolve_dsn(settings)
    try:
        applied: list[int] = []
        if settings.migrate_on_start:
            conn = await connect(dsn, settings.command_timeout_s, embedded=server is not None)
            try:
                applied = [m.version for m in await migrate(conn)]
            finally:
                await conn.close()
        async with _opened_pool(settings, dsn, server) as pool:
            yield Store(pool=pool, dsn=dsn, embedded=server, applied_migrations=applied)
    finally:
        if server is not None:
            await server.stop()


@asynccontextmanager
async def _opened_pool(
    settings: StoreSettings, dsn: str, server: EmbeddedPostgres | None, role: str | None = None
) -> AsyncIterator[asyncpg.Pool]:
    """The store's pool, sized by `settings`, open for the block; an unreachable store named with what to check."""
    pool = create_pool(
        dsn,
        min_size=settings.pool_min_size,
        max_size=max(settings.pool_max_size, settings.pool_min_size),
        command_timeout=settings.command_timeout_s,
        role=role,
    )
    try:
        await pool
    except CONNECT_ERRORS as exc:
        raise unreachable(dsn, exc, settings.command_timeout_s, embedded=server is not None) from exc
    try:
        yield pool
    finally:
        await close_pool(pool)


def _reader_role_statements(role: str, user: str) -> str:
    return (
        f"CREATE ROLE {role} NOLOGIN; GRANT {role} TO {user}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}; "
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {user} IN SCHEMA public GRANT SELECT ON TABLES TO {role}"
    )


async def check_reader_store(conn: asyncpg.Connection, dsn: str, role: str = READER_ROLE) -> None:
    """Refuse, with what to run, a store that a read-only service cannot use as it is: migrations not applied
    (it must not apply them itself), or a read-only role that is missing or that its login may not take."""
    where = describe_dsn(dsn)
    found = await status(conn)
    pending = found.pending
    if not found.applied:
        raise StoreNotReadyError(
            f"The store at {where} has no schema yet, and the web never migrates. Run `arena db migrate` with the "
            "same DATABASE_URL, then start it again."
        )
    if pending:
        named = ", ".join(f"V{m.version:03d} ({m.reason})" for m in pending)
        raise StoreNotReadyError(
            f"The store at {where} is behind this code: migration {named} is not applied, and the web never "
            "migrates. Run `arena db migrate` with the same DATABASE_URL, then start it again."
        )
    user = await conn.fetchval("SELECT current_user")
    exists = await conn.fetchval("SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)", role)
    if not exists or not await conn.fetchval("SELECT pg_has_role(current_user, $1, 'MEMBER')", role):
        why = f"has no role `{role}`" if not exists else f"does not let `{user}` act as `{role}`"
        raise StoreNotReadyError(
            f"The store at {where} {why}, the role the web reads as (migration V010 could not set it up: the "
            f"migrating user needs CREATEROLE). Have the database's owner run: {_reader_role_statements(role, user)}"
        )


@asynccontextmanager
async def open_reader_store(settings: StoreSettings, role: str = READER_ROLE) -> AsyncIterator[Store]:
    """The store for a service that only reads: never migrated here (StoreNotReadyError while its schema is
    behind), and every pooled connection acting as `role`, so that a write fails with a permission error."""
    dsn, server = await resolve_dsn(settings)
    try:
        conn = await connect(dsn, settings.command_timeout_s, embedded=server is not None)
        try:
            await check_reader_store(conn, dsn, role)
        finally:
            await conn.close()
        async with _opened_pool(settings, dsn, server, role) as pool:
            yield Store(pool=pool, dsn=dsn, embedded=server, applied_migrations=[])
    finally:
        if server is not None:
            await server.stop()


async def ping(conn: Conn, timeout_s: float) -> bool:
    """Whether the store answers a trivial query within `timeout_s` (a health check's question)."""
    try:
        return await conn.fetchval("SELECT 1", timeout=timeout_s) == 1
    except CONNECT_ERRORS:
        return False
