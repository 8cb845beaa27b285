"""Problems and their versions. A problem's `current_version` is what new submissions and the boards use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    # The label people read per dtype key, where it is not the key itself: {"float32": "uint32"} for a
    # finite-field problem. Kept out of the hash: a dict has none, and the other fields identify the version.
    data_types: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def is_current(self) -> bool:
        return self.version == self.current_version

    def data_type(self, dtype: str) -> str:
        """What `dtype` (a stored key: boards, results and the `dtype` option name it) reads as for this problem:
        `uint32` for a finite-field problem's float32; the key itself where nothing else was recorded."""
        return self.data_types.get(dtype, dtype)

    @property
    def dtype_labels(self) -> tuple[str, ...]:
        """Each of the problem's dtypes as people read it, in the order of `dtypes`."""
        return tuple(self.data_type(d) for d in self.dtypes)


PROBLEM_COLUMNS = """p.id AS problem_id, p.slug, p.title, p.enabled, p.current_version, v.version, v.source,
    v.dtypes, v.score_metric, v.created_at, v.data_types"""
_SELECT = f"SELECT {PROBLEM_COLUMNS} FROM problems p JOIN problem_versions v ON v.problem_id = p.id"


def problem_version(row: asyncpg.Record) -> ProblemVersion:
    """A ProblemVersion from a row that has the columns of `PROBLEM_COLUMNS` (and maybe others)."""
    fields = {name: row[name] for name in ProblemVersion.__dataclass_fields__}
    return ProblemVersion(**{**fields, "dtypes": tuple(row["dtypes"]), "data_types": dict(row["data_types"])})


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
    data_types: Mapping[str, str] | None = None,
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
        conn,
        problem_id,
        version,
        source=source,
        dtypes=dtypes,
        score_metric=score_metric,
        created_by=created_by,
        data_types=data_types,
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
    data_types: Mapping[str, str] | None = None,
) -> None:
    """A new version's row. `data_types` maps a dtype key to the label people read for it; keys it lacks read as
    themselves."""
    await conn.execute(
        """
        INSERT INTO problem_versions (problem_id, version, source, dtypes, score_metric, created_by, data_types)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        """,
        problem_id,
        version,
        source,
        list(dtypes),
        score_metric,
        created_by,
        _labels(dtypes, data_types),
    )


def _labels(dtypes: Sequence[str], data_types: Mapping[str, str] | None) -> dict[str, str]:
    """The labels worth storing: those of the version's own dtypes that differ from their key."""
    given = data_types or {}
    return {d: given[d] for d in dtypes if given.get(d, d) != d}


async def set_data_types(conn: Conn, problem: ProblemVersion, data_types: Mapping[str, str]) -> bool:
    """Record the labels of a version already stored, where they changed (a row written before V011 has none);
    False when the row had them already."""
    status = await conn.execute(
        """
        UPDATE problem_versions SET data_types = $3
        WHERE problem_id = $1 AND version = $2 AND data_types IS DISTINCT FROM $3
        """,
        problem.problem_id,
        problem.version,
        _labels(problem.dtypes, data_types),
    )
    return status != "UPDATE 0"


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
