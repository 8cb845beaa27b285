"""Migrations from an empty database, their bookkeeping, and the embedded server's data across restarts."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from core.errors import MigrationError
from core.settings import StoreSettings
from core.store import users
from core.store.migrate import MIGRATIONS_DIR, Migration, discover, migrate, status
from core.store.pool import open_store

TABLES = {
    "users",
    "problems",
    "problem_versions",
    "sources",
    "submissions",
    "jobs",
    "job_transitions",
    "case_results",
    "job_profiles",
    "profile_artifacts",
    "leaderboard_entries",
    "leaderboard_sizes",
    "bans",
    "invalidations",
    "audit_log",
    "rate_limits",
    "contests",
    "contest_problems",
    "contest_targets",
    "contest_invitations",
    "contest_standings",
    "contest_standing_cells",
    "podium_checks",
    "ratings",
    "rating_history",
    "rating_archive",
    "queue_turns",
    "queue_waiters",
    "runner_join_tokens",
    "runners",
    "runner_secrets",
    "runner_canaries",
    "personal_tokens",
    "submission_batches",
    "batch_members",
    "schema_migrations",
}


async def _tables(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {r["tablename"] for r in rows}


async def test_migrations_build_the_whole_schema_on_an_empty_database(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        assert await _tables(conn) == set()
        applied = await migrate(conn)
        assert [m.version for m in applied] == [m.version for m in discover()]
        assert await _tables(conn) == TABLES
        recorded = await conn.fetch("SELECT version, sha256 FROM schema_migrations ORDER BY version")
        assert [(r["version"], r["sha256"]) for r in recorded] == [(m.version, m.sha256) for m in discover()]
    finally:
        await conn.close()


async def test_migrating_an_up_to_date_database_applies_nothing(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn)
        assert await migrate(conn) == []
        report = await status(conn)
        assert report.pending == [] and [a.version for a in report.applied] == [m.version for m in discover()]
    finally:
        await conn.close()


async def test_status_of_an_empty_database_lists_every_migration_as_pending(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        report = await status(conn)
        assert report.applied == [] and [m.version for m in report.pending] == [m.version for m in discover()]
        assert await _tables(conn) == set(), "status must not change the database"
    finally:
        await conn.close()


async def test_a_failing_migration_rolls_back_every_pending_one(empty_dsn: str):
    good = discover()
    broken = [*good, Migration(len(good) + 1, "broken", "CREATE TABLE oops (id int); SELECT * FROM missing_table;")]
    conn = await asyncpg.connect(empty_dsn)
    try:
        with pytest.raises(MigrationError, match="nothing was applied"):
            await migrate(conn, broken)
        assert await _tables(conn) == set()
        await migrate(conn, good)
        assert "users" in await _tables(conn)
    finally:
        await conn.close()


async def test_an_applied_migration_that_was_edited_stops_the_start(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn)
        first = discover()[0]
        edited = [Migration(first.version, first.reason, first.sql + "\n-- edited\n")]
        with pytest.raises(MigrationError, match="changed after it was applied"):
            await migrate(conn, edited)
    finally:
        await conn.close()


def test_misnamed_or_duplicate_migration_files_are_rejected(tmp_path: Path):
    (tmp_path / "V1__ok.sql").write_text("SELECT 1;")
    (tmp_path / "add_things.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match=r"not named V<number>__<reason>\.sql"):
        discover(tmp_path)
    (tmp_path / "add_things.sql").unlink()
    (tmp_path / "V01__again.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="two migration files have version 1"):
        discover(tmp_path)


def test_shipped_migrations_are_numbered_from_one_without_gaps():
    versions = [m.version for m in discover(MIGRATIONS_DIR)]
    assert versions == list(range(1, len(versions) + 1))


async def test_embedded_server_keeps_data_across_restarts(tmp_path: Path):
    settings = StoreSettings(data_dir=tmp_path / "pg", database_url=None)
    async with open_store(settings) as store:
        assert store.embedded is not None and list(store.applied_migrations) == [m.version for m in discover()]
        await users.ensure_user(store.pool, "local:kept", "kept")
    async with open_store(settings) as store:
        assert list(store.applied_migrations) == [], "the schema was already there"
        kept = await users.find_user(store.pool, "local:kept")
        assert kept is not None and kept.display_name == "kept"
