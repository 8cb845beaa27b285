"""Problems and their versions. A problem's `current_version` is what new submissions and the boards use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from core.errors import ProblemExistsError
from core.store.pool import Conn


@dataclass(frozen=True)
class ProblemVersion:
    """One problem at one version: the row a submission is attached to."""

    problem_id: int
    slug: str
    title: str
    enabled: bool
    current_version: int
    version: int
    source: str | None
    dtypes: tuple[str, ...]
    score_metric: str
    created_at: datetime

    @property
    def is_current(self) -> bool:
        return self.version == self.current_version


PROBLEM_COLUMNS = """p.id AS problem_id, p.slug, p.title, p.enabled, p.current_version, v.version, v.source,
    v.dtypes, v.score_metric, v.created_at"""
_SELECT = f"SELECT {PROBLEM_COLUMNS} FROM problems p JOIN problem_versions v ON v.problem_id = p.id"


def problem_version(row: asyncpg.Record) -> ProblemVersion:
    """A ProblemVersion from a row that has the columns of `PROBLEM_COLUMNS` (and maybe others)."""
    fields = {name: row[name] for name in ProblemVersion.__dataclass_fields__}
    return ProblemVersion(**{**fields, "dtypes": tuple(row["dtypes"])})


async def get_problem(conn: Conn, slug: str, version: int | None = None) -> ProblemVersion | None:
    """`slug` at `version`, or at its current version when `version` is None."""
    row = await conn.fetchrow(
        _SELECT + " WHERE p.slug = $1 AND v.version = coalesce($2, p.current_version)", slug, version
    )
    return problem_version(row) if row else None


async def get_problem_by_id(conn: Conn, problem_id: int, version: int) -> ProblemVersion | None:
    row = await conn.fetchrow(_SELECT + " WHERE p.id = $1 AND v.version = $2", problem_id, version)
    return problem_version(row) if row else None


async def list_problems(conn: Conn) -> list[ProblemVersion]:
    """Every problem at its current version, by slug."""
    rows = await conn.fetch(_SELECT + " WHERE v.version = p.current_version ORDER BY p.slug")
    return [problem_version(r) for r in rows]


async def list_slugs(conn: Conn) -> list[str]:
    return [r["slug"] for r in await conn.fetch("SELECT slug FROM problems ORDER BY slug")]


async def create_problem(
    conn: Conn,
    *,
    slug: str,
    title: str,
    version: int,
    source: str | None,
    dtypes: Sequence[str],
    score_metric: str,
    created_by: int | None,
) -> ProblemVersion:
    """A new enabled problem with its first version. Call inside a transaction (two inserts, one deferred FK)."""
    try:
        problem_id = await conn.fetchval(
            "INSERT INTO problems (slug, title, current_version, created_by) VALUES ($1, $2, $3, $4) RETURNING id",
            slug,
            title,
            version,
            created_by,
        )
    except asyncpg.UniqueViolationError as exc:
        raise ProblemExistsError(f"A problem named `{slug}` exists already; pick another slug or replace it.") from exc
    await insert_version(
        conn, problem_id, version, source=source, dtypes=dtypes, score_metric=score_metric, created_by=created_by
    )
    created = await get_problem_by_id(conn, problem_id, version)
    assert created is not None
    return created


async def insert_version(
    conn: Conn,
    problem_id: int,
    version: int,
    *,
    source: str | None,
    dtypes: Sequence[str],
    score_metric: str,
    created_by: int | None,
) -> None:
    await conn.execute(
        """
        INSERT INTO problem_versions (problem_id, version, source, dtypes, score_metric, created_by)
        VALUES ($1, $2, $3, $4, $5, $6)
        """,
        problem_id,
        version,
        source,
        list(dtypes),
        score_metric,
        created_by,
    )


async def lock_problem(conn: Conn, slug: str) -> ProblemVersion | None:
    """The current version, with the problem row locked until the transaction ends (for version changes)."""
    row = await conn.fetchrow(_SELECT + " WHERE p.slug = $1 AND v.version = p.current_version FOR UPDATE OF p", slug)
    return problem_version(row) if row else None


async def rename_problem(conn: Conn, problem_id: int, slug: str) -> None:
    """Give a problem a new slug; its versions, submissions and boards stay with it (they hold its id)."""
    await conn.execute("UPDATE problems SET slug = $2, updated_at = now() WHERE id = $1", problem_id, slug)


async def latest_version(conn: Conn, problem_id: int) -> int:
    return int(await conn.fetchval("SELECT max(version) FROM problem_versions WHERE problem_id = $1", problem_id))


async def set_current_version(conn: Conn, problem_id: int, version: int, title: str | None = None) -> None:
    await conn.execute(
        "UPDATE problems SET current_version = $2, title = coalesce($3, title), updated_at = now() WHERE id = $1",
        problem_id,
        version,
        title,
    )


async def set_enabled(conn: Conn, slug: str, enabled: bool) -> bool:
    """Enable or disable `slug`; False when no such problem exists."""
    status = await conn.execute("UPDATE problems SET enabled = $2, updated_at = now() WHERE slug = $1", slug, enabled)
    return status != "UPDATE 0"
