"""Leaderboards, ranks and history, for the bot, the CLI and the tests alike.

One query path: `core.store.leaderboard`.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from contract.names import LANGUAGES, METHODS
from core.errors import InvalidOptionError, UserNotFoundError
from core.problems import require_problem
from core.store import leaderboard, submissions, users
from core.store.leaderboard import ANY_LANGUAGE, BoardKey, BoardRow, BoardSummary
from core.store.pool import Conn
from core.store.problems import ProblemVersion
from runner.protocol import protocol_version

MAX_PAGE = 100


@dataclass(frozen=True)
class Board:
    """One page of a leaderboard. `language` is `any` or the language it was filtered to; `method` is the timing
    method that ranked it (None when no board exists for this problem, GPU type and dtype yet)."""

    problem: ProblemVersion
    gpu_type: str
    dtype: str
    language: str
    rows: list[BoardRow]
    method: str | None = None

    @property
    def score_unit(self) -> str:
        return "GFLOPS" if self.problem.score_metric == "gflops" else "GB/s"


def older_protocol(row: BoardRow) -> bool:
    """Whether the entry was timed under another timing protocol than the current one (runner.protocol), or before
    results carried one: its time was measured otherwise than a new run's would be. `arena rejudge` re-runs it."""
    return row.protocol != protocol_version()


OLDER_PROTOCOL_MARK = "†"


def older_protocol_note(rows: list[BoardRow]) -> str | None:
    """The line under a board whose rows include entries timed under an older protocol; None when none is."""
    if not any(older_protocol(r) for r in rows):
        return None
    return (
        f"{OLDER_PROTOCOL_MARK} timed under an older timing protocol than the current {protocol_version()}: a "
        "moderator re-judges such entries with `arena rejudge`."
    )


def _language(language: str | None) -> str:
    if language is None or language == ANY_LANGUAGE:
        return ANY_LANGUAGE
    if language not in LANGUAGES:
        raise InvalidOptionError(f"`{language}` is not a language; filter by one of {', '.join(LANGUAGES)}.")
    return language


async def _method(conn: Conn, problem: ProblemVersion, gpu_type: str, dtype: str, method: str | None) -> str | None:
    """The method whose board to read: the one asked for, else the fullest board's (None when there is none).

    Never guessed from the GPU type: the runner chose how to time, and the submissions recorded it."""
    if method is not None:
        if method not in METHODS:
            raise InvalidOptionError(f"`{method}` is not a timing method; choose one of {', '.join(METHODS)}.")
        return method
    found = await leaderboard.board_methods(conn, problem.problem_id, problem.version, gpu_type, dtype)
    return found[0] if found else None


def _key(problem: ProblemVersion, gpu_type: str, dtype: str, method: str) -> BoardKey:
    return BoardKey(problem.problem_id, problem.version, gpu_type, dtype, method)


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
    method: str | None = None,
) -> Board:
    """Ranks offset+1 .. offset+limit on (problem, GPU type, dtype, method), at the problem's current version by
    default, on the fullest method's board unless `method` names one."""
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise InvalidOptionError(f"Show between 1 and {MAX_PAGE} rows from a non-negative offset.")
    lang = _language(language)
    problem = await require_problem(conn, slug, version)
    chosen = await _method(conn, problem, gpu_type, dtype, method)
    rows: list[BoardRow] = []
    if chosen is not None:
        rows = await leaderboard.top(conn, _key(problem, gpu_type, dtype, chosen), lang, limit, offset)
    return Board(problem, gpu_type, dtype, lang, rows, chosen)


async def get_rank(
    conn: Conn,
    slug: str,
    gpu_type: str,
    dtype: str,
    user_external_id: str,
    *,
    language: str | None = None,
    version: int | None = None,
    method: str | None = None,
) -> BoardRow | None:
    """The user's place on the board (the fullest method's unless `method` names one), or None when they have no
    verified ranked submission there."""
    lang = _language(language)
    problem = await require_problem(conn, slug, version)
    chosen = await _method(conn, problem, gpu_type, dtype, method)
    user = await users.find_user(conn, user_external_id)
    if user is None or chosen is None:
        return None
    return await leaderboard.user_rank(conn, _key(problem, gpu_type, dtype, chosen), user.id, lang)


async def rank_on_fullest_board(
    pool: asyncpg.Pool, problem_id: int, version: int, gpu_type: str, dtype: str, user_id: int
) -> BoardRow | None:
    """`get_rank` for a problem version and user already known by id (a submission's receipt): the user's place on
    the fullest board of the GPU type and dtype, read on one connection with two statements instead of four."""
    async with pool.acquire() as conn:
        found = await leaderboard.board_methods(conn, problem_id, version, gpu_type, dtype)
        if not found:
            return None
        return await leaderboard.user_rank(conn, BoardKey(problem_id, version, gpu_type, dtype, found[0]), user_id)


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
    """The (GPU type, dtype, method) boards of a problem version that have entries, fullest first."""
    problem = await require_problem(conn, slug, version)
    return problem, await leaderboard.boards(conn, problem.problem_id, problem.version)
