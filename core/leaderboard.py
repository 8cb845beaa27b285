"""Leaderboards, ranks and history, for the bot, the CLI and the tests alike.

One query path: `core.store.leaderboard`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InvalidOptionError, UserNotFoundError
from core.problems import require_problem
from core.store import leaderboard, submissions, users
from core.store.leaderboard import ANY_LANGUAGE, BoardKey, BoardRow, BoardSummary
from core.store.pool import Conn
from core.store.problems import ProblemVersion

LANGUAGES = ("cuda", "python", "triton")
MAX_PAGE = 100


@dataclass(frozen=True)
class Board:
    """One page of a leaderboard. `language` is `any` or the language it was filtered to."""

    problem: ProblemVersion
    gpu_type: str
    dtype: str
    language: str
    rows: list[BoardRow]

    @property
    def score_unit(self) -> str:
        return "GFLOPS" if self.problem.score_metric == "gflops" else "GB/s"


def _language(language: str | None) -> str:
    if language is None or language == ANY_LANGUAGE:
        return ANY_LANGUAGE
    if language not in LANGUAGES:
        raise InvalidOptionError(f"`{language}` is not a language; filter by one of {', '.join(LANGUAGES)}.")
    return language


def _key(problem: ProblemVersion, gpu_type: str, dtype: str) -> BoardKey:
    return BoardKey(problem.problem_id, problem.version, gpu_type, dtype)


async def get_leaderboard(
    conn: Conn,
    slug: str,
    gpu_type: str,
    dtype: str = "float32",
    *,
    language: str | None = None,
    limit: int = 20,
    offset: int = 0,
    version: int | None = None,
) -> Board:
    """Ranks offset+1 .. offset+limit on (problem, GPU type, dtype), at the problem's current version by default."""
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise InvalidOptionError(f"Show between 1 and {MAX_PAGE} rows from a non-negative offset.")
    lang = _language(language)
    problem = await require_problem(conn, slug, version)
    rows = await leaderboard.top(conn, _key(problem, gpu_type, dtype), lang, limit, offset)
    return Board(problem, gpu_type, dtype, lang, rows)


async def get_rank(
    conn: Conn,
    slug: str,
    gpu_type: str,
    dtype: str,
    user_external_id: str,
    *,
    language: str | None = None,
    version: int | None = None,
) -> BoardRow | None:
    """The user's place on the board, or None when they have no verified ranked submission there."""
    lang = _language(language)
    problem = await require_problem(conn, slug, version)
    user = await users.find_user(conn, user_external_id)
    if user is None:
        return None
    return await leaderboard.user_rank(conn, _key(problem, gpu_type, dtype), user.id, lang)


async def get_history(
    conn: Conn, user_external_id: str, slug: str | None = None, limit: int = 20
) -> list[submissions.Submission]:
    """The user's submissions, newest first, across all problems or for one."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidOptionError(f"Show between 1 and {MAX_PAGE} submissions.")
    user = await users.find_user(conn, user_external_id)
    if user is None:
        raise UserNotFoundError("No submissions yet: this user has never submitted.")
    problem_id = (await require_problem(conn, slug)).problem_id if slug is not None else None
    return await submissions.history(conn, user.id, problem_id, limit)


async def list_boards(conn: Conn, slug: str, version: int | None = None) -> tuple[ProblemVersion, list[BoardSummary]]:
    """The (GPU type, dtype) boards of a problem version that have entries, fullest first."""
    problem = await require_problem(conn, slug, version)
    return problem, await leaderboard.boards(conn, problem.problem_id, problem.version)
