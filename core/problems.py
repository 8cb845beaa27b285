"""Problems as the store knows them: looking one up for a submission, and registering built-in ones.

Callers that have a Problem object describe it with `ProblemSpec.of(problem)`, which reads its attributes and
the data types of its buffers (`problems.catalog`, which loads no torch); the store keeps them, so that pages and
embeds show a problem's dtypes without loading any problem code.
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

import asyncpg

from core.errors import (
    InvalidOptionError,
    ProblemDisabledError,
    ProblemExistsError,
    UnknownProblemError,
    UnsupportedDtypeError,
)
from core.store import problems
from core.store.pool import Conn
from problems.base import Problem
from problems.catalog import data_types
from problems.distributed.base import DistributedProblem
from problems.distributed.registry import distributed_problems
from problems.registry import builtin_problems, canonical_slug

log = logging.getLogger(__name__)


# The store's CHECK on problems.slug: no problem can have any other name.
SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MAX_TITLE_CHARS = 200


def _unprintable(text: str) -> bool:
    # Control characters (NUL above all: PostgreSQL refuses it in text) and lone surrogates (not encodable).
    return any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


def shown(text: str, limit: int = 80) -> str:
    """`text` safe to echo in a message: control characters and surrogates as �, and not too long."""
    clean = "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def check_slug(slug: str) -> str:
    """`slug`, unless it holds characters that no problem name has and the store cannot hold (NUL, other
    control characters): then UnknownProblemError, before any query. Other unknown names are the store's to
    answer, with close matches."""
    if _unprintable(slug):
        raise UnknownProblemError(
            f"`{shown(slug)}` is not a problem name: it holds control characters (shown as \ufffd). "
            "Type the name as `/problems` lists it, e.g. `vector_add`."
        )
    return slug


def check_new_problem(slug: str, title: str) -> None:
    """Refuse the names of a problem about to be stored, saying what a name must look like."""
    if not SLUG.fullmatch(slug):
        raise InvalidOptionError(
            f"`{shown(slug)}` cannot be a problem's slug: use 1 to 64 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit (e.g. `vector_add`)."
        )
    if not title.strip() or len(title) > MAX_TITLE_CHARS or _unprintable(title):
        raise InvalidOptionError(
            f"`{shown(title)}` cannot be the title of `{slug}`: use 1 to {MAX_TITLE_CHARS} characters of text, "
            "without control characters."
        )


@dataclass(frozen=True)
class ProblemSpec:
    """A problem version to register: `source` is the module text, or None for a problem built into runners."""

    slug: str
    title: str
    version: int
    dtypes: tuple[str, ...]
    score_metric: str = "gflops"
    source: str | None = None
    # Former slugs: a stored problem under one of them is renamed to `slug`, keeping its versions and boards.
    aliases: tuple[str, ...] = ()
    # The label people read per dtype key where it is not the key: {"float32": "uint32"} (`dtype_labels`).
    data_types: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        check_new_problem(self.slug, self.title)

    @classmethod
    def of(cls, problem: Problem, source: str | None = None) -> ProblemSpec:
        p = problem
        return cls(p.slug, p.title, p.version, tuple(p.dtypes), p.score_metric, source, data_types=dtype_labels(p))

    @classmethod
    def builtin(cls, problem: Problem) -> ProblemSpec:
        """The spec of a problem built into runners, with its former slugs."""
        p = problem
        return cls(p.slug, p.title, p.version, tuple(p.dtypes), p.score_metric, None, tuple(p.aliases), dtype_labels(p))

    @classmethod
    def distributed(cls, problem: DistributedProblem) -> ProblemSpec:
        """The spec of a distributed problem built into runners: its boards are keyed by rank pool (`cpux2`), one
        per world size, so the spec itself says no world size."""
        p = problem
        return cls(p.slug, p.title, p.version, tuple(p.dtypes), p.score_metric)


def dtype_labels(problem: Problem) -> dict[str, str]:
    """The data types `problem` computes on, per dtype key, where they are not the key: {"float32": "uint32"} for a
    finite-field problem, {} for matmul. What the store keeps beside the keys."""
    labels = {dtype: data_types(problem, dtype) for dtype in problem.dtypes}
    return {dtype: label for dtype, label in labels.items() if label != dtype}


async def unknown_problem(conn: Conn, slug: str) -> UnknownProblemError:
    """The error for a slug the store does not have, with close matches."""
    close = difflib.get_close_matches(slug, await problems.list_slugs(conn), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(f'`{s}`' for s in close)}?" if close else ""
    return UnknownProblemError(f"There is no problem called `{shown(slug)}`.{hint}")


async def find_problem(conn: Conn, slug: str, version: int | None = None) -> problems.ProblemVersion | None:
    """`slug` at `version` (default: current); a former slug of a built-in problem finds the problem it became."""
    renamed = canonical_slug(slug)
    found = await problems.get_problem(conn, renamed, version) if renamed != slug else None
    return found or await problems.get_problem(conn, slug, version)


async def require_problem(conn: Conn, slug: str, version: int | None = None) -> problems.ProblemVersion:
    """`slug` at `version` (default: current), or UnknownProblemError naming close matches."""
    if not SLUG.fullmatch(check_slug(slug)):
        raise await unknown_problem(conn, slug)  # no problem has such a name: the store need not be asked
    found = await find_problem(conn, slug, version)
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


async def sync_builtin_problems(pool: asyncpg.Pool) -> int:
    """Register every problem built into runners, the one-device ones and the distributed ones, and return how many.

    The one list every long-running front end registers at start (the bot, `arena api`): a deployment of either
    alone then knows every slug a runner can judge, so that `/submit` and `POST /v1/submissions` find them."""
    specs = [ProblemSpec.builtin(p) for p in builtin_problems().values()]
    specs += [ProblemSpec.distributed(d) for d in distributed_problems().values()]
    for spec in specs:
        await sync_problem(pool, spec)
    return len(specs)


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
        for alias in spec.aliases if current is None else ():
            former = await problems.lock_problem(conn, alias)
            if former is not None:
                log.info("problem %s is now called %s", alias, spec.slug)
                await problems.rename_problem(conn, former.problem_id, spec.slug)
                current = await problems.lock_problem(conn, spec.slug)
                break
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
                data_types=spec.data_types,
            )
        if spec.version < current.current_version:
            return current
        if spec.version == current.current_version:
            # The same version as the code's: its labels come from the code, and a row stored before they were
            # recorded (or under a catalogue that read them differently) gets them now.
            if spec.data_types != current.data_types and await problems.set_data_types(conn, current, spec.data_types):
                return await require_problem(conn, spec.slug)
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
            data_types=spec.data_types,
        )
        await problems.set_current_version(conn, current.problem_id, spec.version, spec.title)
        return await require_problem(conn, spec.slug)
