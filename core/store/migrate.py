"""Versioned SQL migrations: `migrations/V{n}__{reason}.sql`, applied in order, all pending ones in ONE transaction.

Applied versions, with each file's SHA-256, live in `schema_migrations`. An applied file that was edited since
stops the start with MigrationError: write a new migration instead of changing an old one.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import asyncpg

from core.errors import MigrationError

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_NAME = re.compile(r"^V(?P<version>\d+)__(?P<reason>[a-z0-9_]+)\.sql$")
# One key for every process that migrates this database, so two starting bots never migrate at once.
_ADVISORY_LOCK_KEY = 0x4B41_0001

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer PRIMARY KEY,
    reason      text NOT NULL,
    sha256      text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    version: int
    reason: str
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AppliedMigration:
    version: int
    reason: str
    sha256: str
    applied_at: datetime


@dataclass(frozen=True)
class MigrationStatus:
    applied: list[AppliedMigration]
    pending: list[Migration]


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Every migration file in `directory`, by version; a misnamed .sql file or a repeated version is an error."""
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name} is not named V<number>__<reason>.sql; rename it.")
        version = int(match["version"])
        if version in found:
            raise MigrationError(f"two migration files have version {version}; give {path.name} the next number.")
        found[version] = Migration(version, match["reason"], path.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


async def _applied(conn: asyncpg.Connection) -> list[AppliedMigration]:
    rows = await conn.fetch("SELECT version, reason, sha256, applied_at FROM schema_migrations ORDER BY version")
    return [AppliedMigration(r["version"], r["reason"], r["sha256"], r["applied_at"]) for r in rows]


def _pending(applied: list[AppliedMigration], migrations: list[Migration]) -> list[Migration]:
    by_version = {m.version: m for m in migrations}
    for done in applied:
        current = by_version.get(done.version)
        if current is None:
            raise MigrationError(
                f"the database has migration V{done.version} ({done.reason}) but no such file exists; "
                "run a build of the code that created this database."
            )
        if current.sha256 != done.sha256:
            raise MigrationError(
                f"V{done.version}__{done.reason}.sql changed after it was applied; restore it and put the change "
                "in a new migration."
            )
    done_versions = {a.version for a in applied}
    return [m for m in migrations if m.version not in done_versions]


async def migrate(conn: asyncpg.Connection, migrations: list[Migration] | None = None) -> list[Migration]:
    """Apply every pending migration in one transaction and return what was applied (empty when up to date)."""
    migrations = discover() if migrations is None else migrations
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _ADVISORY_LOCK_KEY)
        await conn.execute(_CREATE_TABLE)
        pending = _pending(await _applied(conn), migrations)
        for migration in pending:
            log.info("applying migration V%d %s", migration.version, migration.reason)
            try:
                await conn.execute(migration.sql)
            except asyncpg.PostgresError as exc:
                raise MigrationError(
                    f"V{migration.version}__{migration.reason}.sql failed: {exc}; nothing was applied."
                ) from exc
            await conn.execute(
                "INSERT INTO schema_migrations (version, reason, sha256) VALUES ($1, $2, $3)",
                migration.version,
                migration.reason,
                migration.sha256,
            )
    return pending


async def status(conn: asyncpg.Connection, migrations: list[Migration] | None = None) -> MigrationStatus:
    """What is applied and what is pending, without changing anything."""
    migrations = discover() if migrations is None else migrations
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    applied = await _applied(conn) if exists else []
    return MigrationStatus(applied=applied, pending=_pending(applied, migrations))
