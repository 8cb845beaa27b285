"""Problems as the store knows them: looking one up for a submission, and registering built-in ones.

The core never imports `problems` (it needs torch); callers that have a Problem object describe it with
`ProblemSpec.of(problem)`, which reads plain attributes.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from typing import Protocol

import asyncpg

from bot.core.errors import ProblemDisabledError, ProblemExistsError, UnknownProblemError, UnsupportedDtypeError
from bot.db import problems
from bot.db.pool import Conn

log = logging.getLogger(__name__)


class ProblemLike(Protocol):
    """The attributes of `problems.base.Problem` that the store records."""

    slug: str
    title: str
    version: int
    dtypes: tuple[str, ...]
    score_metric: str


@dataclass(frozen=True)
class ProblemSpec:
    """A problem version to register: `source` is the module text, or None for a problem built into runners."""

    slug: str
    title: str
    version: int
    dtypes: tuple[str, ...]
    score_metric: str = "gflops"
    source: str | None = None

    @classmethod
    def of(cls, problem: ProblemLike, source: str | None = None) -> ProblemSpec:
        return cls(problem.slug, problem.title, problem.version, tuple(problem.dtypes), problem.score_metric, source)


async def unknown_problem(conn: Conn, slug: str) -> UnknownProblemError:
    """The error for a slug the store does not have, with close matches."""
    close = difflib.get_close_matches(slug, await problems.list_slugs(conn), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(f'`{s}`' for s in close)}?" if close else ""
    return UnknownProblemError(f"There is no problem called `{slug}`.{hint}")


async def require_problem(conn: Conn, slug: str, version: int | None = None) -> problems.ProblemVersion:
    """`slug` at `version` (default: current), or UnknownProblemError naming close matches."""
    found = await problems.get_problem(conn, slug, version)
    if found is None:
        if version is not None and await problems.get_problem(conn, slug) is not None:
            raise UnknownProblemError(f"`{slug}` has no version {version}.")
        raise await unknown_problem(conn, slug)
    return found


def check_open(problem: problems.ProblemVersion, dtype: str) -> problems.ProblemVersion:
    """`problem` if it is enabled and takes `dtype`: what a new submission needs."""
    slug = problem.slug
    if not problem.enabled:
        raise ProblemDisabledError(f"`{slug}` is closed for submissions right now; a moderator has disabled it.")
    if dtype not in problem.dtypes:
        raise UnsupportedDtypeError(f"`{slug}` does not take {dtype}; choose one of {', '.join(problem.dtypes)}.")
    return problem


async def sync_problem(pool: asyncpg.Pool, spec: ProblemSpec) -> problems.ProblemVersion:
    """Make the store know `spec`: create the problem, or add the version when the code's is newer.

    A store whose current version is newer (a moderator replaced the problem) keeps it. Two processes that
    register the same new problem at once both succeed: the second finds the first's row.
    """
    try:
        return await _sync_problem(pool, spec)
    except ProblemExistsError:
        return await _sync_problem(pool, spec)


async def _sync_problem(pool: asyncpg.Pool, spec: ProblemSpec) -> problems.ProblemVersion:
    async with pool.acquire() as conn, conn.transaction():
        current = await problems.lock_problem(conn, spec.slug)
        if current is None:
            log.info("registering problem %s v%d", spec.slug, spec.version)
            return await problems.create_problem(
                conn,
                slug=spec.slug,
                title=spec.title,
                version=spec.version,
                source=spec.source,
                dtypes=spec.dtypes,
                score_metric=spec.score_metric,
                created_by=None,
            )
        if spec.version <= current.current_version:
            return current
        log.info("problem %s: version %d -> %d", spec.slug, current.current_version, spec.version)
        await problems.insert_version(
            conn,
            current.problem_id,
            spec.version,
            source=spec.source,
            dtypes=spec.dtypes,
            score_metric=spec.score_metric,
            created_by=None,
        )
        await problems.set_current_version(conn, current.problem_id, spec.version, spec.title)
        return await require_problem(conn, spec.slug)
