"""`arena db migrate` and `arena db status`: the store's schema and what it holds.

With no DATABASE_URL set these use the embedded PostgreSQL under the user's data directory (ARENA_DATA_DIR).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import asyncpg

from arena.output import add_json_flag, emit
from arena.render import table
from core.contests.ratings import rate_pending
from core.errors import MigrationError, StoreUnavailableError, UserFacingError
from core.rating import METHOD as RATING_METHOD
from core.settings import StoreSettings
from core.store import jobs
from core.store.embedded import EmbeddedPostgres
from core.store.migrate import migrate, status
from core.store.pool import connect, describe_dsn, resolve_dsn

T = TypeVar("T")


def describe_server(dsn: str, server: EmbeddedPostgres | None) -> str:
    """Where the store is, without the password."""
    if server is not None:
        return f"embedded PostgreSQL, data in {server.data_dir}"
    return f"{describe_dsn(dsn)} (DATABASE_URL)"


def with_connection(settings: StoreSettings, work: Callable[[asyncpg.Connection, str], Awaitable[T]]) -> T:
    """Run `work` on one connection to the store, starting the embedded server if that is the store."""

    async def main() -> T:
        dsn, server = await resolve_dsn(settings)
        try:
            conn = await connect(dsn, settings.command_timeout_s, embedded=server is not None)
            try:
                return await work(conn, describe_server(dsn, server))
            finally:
                await conn.close()
        finally:
            if server is not None:
                await server.stop()

    try:
        return asyncio.run(main())
    except (StoreUnavailableError, MigrationError, OSError, asyncpg.PostgresError) as exc:
        raise UserFacingError(str(exc)) from exc


def cmd_migrate(args: argparse.Namespace) -> int:
    async def work(conn: asyncpg.Connection, where: str) -> int:
        applied = await migrate(conn)
        # A migration that changes the rating method leaves the contests unrated; their new ratings take
        # arithmetic SQL has not got, so they are computed here, at once, rather than at the next freeze.
        async with conn.transaction():
            rerated = await rate_pending(conn, datetime.now(UTC))
        lines = [f"Store: {where}", *(f"applied V{m.version:03d} {m.reason}" for m in applied)]
        if not applied:
            lines.append("The schema is up to date; nothing to apply.")
        if rerated:
            lines.append(f"rated {len(rerated)} frozen contests, in the order they ended ({RATING_METHOD})")
        data = {
            "store": where,
            "applied": [{"version": m.version, "reason": m.reason} for m in applied],
            "rerated_contests": len(rerated),
        }
        emit(args, data, "\n".join(lines))
        return 0

    return with_connection(StoreSettings(), work)


async def _counts(conn: asyncpg.Connection) -> list[list[str]]:
    rows = []
    for name in ("users", "problems", "submissions", "leaderboard_entries", "bans"):
        rows.append([name, str(await conn.fetchval(f"SELECT count(*) FROM {name}"))])
    by_state = await jobs.count_by_state(conn)
    rows.extend([f"jobs {state}", str(by_state.get(state, 0))] for state in (*jobs.LIVE_STATES, *jobs.FINAL_STATES))
    return rows


def cmd_status(args: argparse.Namespace) -> int:
    async def work(conn: asyncpg.Connection, where: str) -> int:
        report = await status(conn)
        applied = [[f"V{a.version:03d}", a.reason, a.applied_at.strftime("%Y-%m-%d %H:%M")] for a in report.applied]
        pending = [[f"V{m.version:03d}", m.reason, "pending"] for m in report.pending]
        text = f"Store: {where}\n" + table(["migration", "reason", "applied"], applied + pending, align="lll")
        data: dict[str, object] = {
            "store": where,
            "applied": [{"version": a.version, "reason": a.reason, "applied_at": a.applied_at} for a in report.applied],
            "pending": [{"version": m.version, "reason": m.reason} for m in report.pending],
        }
        if report.pending:
            emit(args, data, text + "\n\nRun `arena db migrate` to apply the pending migrations.")
            return 1
        counts = await _counts(conn)
        data["rows"] = {name: int(count) for name, count in counts}
        emit(args, data, text + "\n\n" + table(["table", "rows"], counts))
        return 0

    return with_connection(StoreSettings(), work)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="the submission store: schema migrations and status")
    db = p.add_subparsers(dest="db_command", required=True)
    migrate_parser = db.add_parser("migrate", help="apply pending schema migrations (one transaction)")
    add_json_flag(migrate_parser)
    migrate_parser.set_defaults(func=cmd_migrate)
    status_parser = db.add_parser("status", help="where the store is, its migrations, and what it holds")
    add_json_flag(status_parser)
    status_parser.set_defaults(func=cmd_status)
