"""Leaderboards per (problem, version, GPU type, dtype, timing method): each user's best verified ranked submission.

The method is part of the key because times measured differently (a cold-L2 `arena` median, the seed's mean)
are not comparable: a board holds one method's times only.

`leaderboard_entries` keeps one row per eligible user and board for each language they ranked in, plus an
`any` row for their overall best. It is derived data, recomputed from `submissions` and `bans` in the same
transaction as whatever changed them: `refresh_user` for one group of boards (a result, an invalidation, a rerun),
`refresh_user_everywhere` for all of a user's boards (a ban or an unban), `rebuild` for everything. Each board's
size follows in `leaderboard_sizes`, kept by triggers (V014), so that choosing and listing boards counts nothing.

Ranking happens at read time, in one order shared by every caller: score descending, then the earlier
submission, then the lower id. A page is numbered by a window function that reads the board's index in that same
order, so the top 20 costs 20 index entries however large the board. A user's rank is one plus the entries ahead
of theirs in that order, counted in the same index: a count down to their entry, cheaper than numbering every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.store.pool import Conn

ANY_LANGUAGE = "any"


@dataclass(frozen=True)
class BoardKey:
    problem_id: int
    problem_version: int
    gpu_type: str
    dtype: str
    method: str


@dataclass(frozen=True)
class BoardRow:
    rank: int
    user_id: int
    display_name: str
    submission_id: int
    language: str
    score: float
    submitted_at: datetime
    # The timing protocol's version of the entry's run (runner.protocol); None for runs recorded before versions.
    protocol: str | None = None


@dataclass(frozen=True)
class BoardSummary:
    gpu_type: str
    dtype: str
    method: str
    entries: int


# The best eligible submission per board and language, for the submissions `{where}` selects.
_BEST = """
    SELECT DISTINCT ON (lang, s.method{partition}) s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method,
           lang, s.user_id, s.id, s.score, s.created_at
    FROM submissions s CROSS JOIN LATERAL unnest(ARRAY[s.language, 'any']) AS lang
    WHERE s.mode = 'ranked' AND s.status = 'passed' AND NOT s.invalidated AND s.score IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = s.user_id AND b.lifted_at IS NULL)
      AND s.method IS NOT NULL AND {where}
    ORDER BY lang, s.method{partition}, s.score DESC, s.created_at, s.id
"""

# One refresher per user at a time: two transactions refreshing the same user would both insert the same keys,
# and a ban committed while a result is recorded must not leave the banned user's new entry behind. Statements
# after the lock see what the lock's previous holder committed.
_LOCK_USER = "SELECT pg_advisory_xact_lock(hashtextextended(format('leaderboard-user:%s', $1::bigint), 0))"

_INSERT = """INSERT INTO leaderboard_entries (problem_id, problem_version, gpu_type, dtype, method, language,
    user_id, submission_id, score, submitted_at) """


@dataclass(frozen=True)
class BoardGroup:
    """The boards of every method for one (problem, version, GPU type, dtype): what one result can change. A
    rerun may be timed by another method than the run before it, so both methods' boards are recomputed."""

    problem_id: int
    problem_version: int
    gpu_type: str
    dtype: str


async def refresh_user(conn: Conn, group: BoardGroup, user_id: int) -> None:
    """Recompute `user_id`'s rows on one group of boards. Call inside the transaction that changed their
    submissions."""
    await conn.execute(_LOCK_USER, user_id)
    args = (group.problem_id, group.problem_version, group.gpu_type, group.dtype, user_id)
    board = "problem_id = $1 AND problem_version = $2 AND gpu_type = $3 AND dtype = $4 AND user_id = $5"
    await conn.execute(f"DELETE FROM leaderboard_entries WHERE {board}", *args)
    where = "s.problem_id = $1 AND s.problem_version = $2 AND s.gpu_type = $3 AND s.dtype = $4 AND s.user_id = $5"
    await conn.execute(_INSERT + _BEST.format(where=where, partition=""), *args)


async def refresh_user_everywhere(conn: Conn, user_id: int) -> None:
    """Recompute every board row of `user_id` (after a ban or an unban). Call inside that transaction."""
    await conn.execute(_LOCK_USER, user_id)
    await conn.execute("DELETE FROM leaderboard_entries WHERE user_id = $1", user_id)
    partition = ", s.problem_id, s.problem_version, s.gpu_type, s.dtype"
    await conn.execute(_INSERT + _BEST.format(where="s.user_id = $1", partition=partition), user_id)


async def rebuild(conn: Conn) -> int:
    """Recompute every board from `submissions` (after a bulk load or a repair); returns the rows written."""
    await conn.execute("LOCK TABLE leaderboard_entries IN EXCLUSIVE MODE")
    await conn.execute("DELETE FROM leaderboard_entries")
    partition = ", s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.user_id"
    status = await conn.execute(_INSERT + _BEST.format(where="true", partition=partition))
    return int(status.rsplit(" ", 1)[1])


# The one ranking query. `{filter}` is one of the constant fragments in _FILTERS, never caller text. The inner
# ORDER BY repeats the window's order (not `rank`), so the planner streams the index instead of sorting.
_RANKED = """
SELECT r.rank, r.user_id, (SELECT u.display_name FROM users u WHERE u.id = r.user_id) AS display_name,
       r.submission_id, (SELECT s.language FROM submissions s WHERE s.id = r.submission_id) AS language,
       r.score, r.submitted_at, (SELECT s.protocol FROM submissions s WHERE s.id = r.submission_id) AS protocol
FROM (
    SELECT * FROM (
        SELECT e.user_id, e.submission_id, e.score, e.submitted_at,
               row_number() OVER (ORDER BY e.score DESC, e.submitted_at, e.submission_id) AS rank
        FROM leaderboard_entries e
        WHERE e.problem_id = $1 AND e.problem_version = $2 AND e.gpu_type = $3 AND e.dtype = $4
          AND e.method = $8 AND e.language = $5
    ) board
    WHERE {filter}
    ORDER BY score DESC, submitted_at, submission_id
    LIMIT $7
) r
ORDER BY r.rank
"""
_FILTERS = {"page": "rank > $6"}

# One user's place, without numbering the board down to them: one plus the entries ahead of theirs in the window's
# order, counted in two ranges of the board's index (a higher score; the same score, submitted earlier). On a board
# of 14,000 users, a rank near the bottom took 4.7 ms through the window and takes about 1 ms counted.
_BOARD_OF = """{alias}.problem_id = e.problem_id AND {alias}.problem_version = e.problem_version
    AND {alias}.gpu_type = e.gpu_type AND {alias}.dtype = e.dtype AND {alias}.method = e.method
    AND {alias}.language = e.language"""
_USER_RANK = f"""
SELECT 1 + (SELECT count(*) FROM leaderboard_entries a WHERE {_BOARD_OF.format(alias="a")} AND a.score > e.score)
         + (SELECT count(*) FROM leaderboard_entries t WHERE {_BOARD_OF.format(alias="t")} AND t.score = e.score
              AND (t.submitted_at, t.submission_id) < (e.submitted_at, e.submission_id)) AS rank,
       e.user_id, (SELECT u.display_name FROM users u WHERE u.id = e.user_id) AS display_name,
       e.submission_id, (SELECT s.language FROM submissions s WHERE s.id = e.submission_id) AS language,
       e.score, e.submitted_at, (SELECT s.protocol FROM submissions s WHERE s.id = e.submission_id) AS protocol
FROM leaderboard_entries e
WHERE e.problem_id = $1 AND e.problem_version = $2 AND e.gpu_type = $3 AND e.dtype = $4 AND e.method = $5
  AND e.language = $6 AND e.user_id = $7
"""


def _ranked_sql(kind: str) -> str:
    return _RANKED.format(filter=_FILTERS[kind])


async def top(
    conn: Conn, key: BoardKey, language: str = ANY_LANGUAGE, limit: int = 20, offset: int = 0
) -> list[BoardRow]:
    """Ranks offset+1 .. offset+limit of the board, best first."""
    rows = await conn.fetch(
        _ranked_sql("page"),
        key.problem_id,
        key.problem_version,
        key.gpu_type,
        key.dtype,
        language,
        offset,
        limit,
        key.method,
    )
    return [BoardRow(**r) for r in rows]


async def user_rank(conn: Conn, key: BoardKey, user_id: int, language: str = ANY_LANGUAGE) -> BoardRow | None:
    """The user's row on the board, or None when they have no eligible submission there (or are banned)."""
    row = await conn.fetchrow(
        _USER_RANK, key.problem_id, key.problem_version, key.gpu_type, key.dtype, key.method, language, user_id
    )
    return BoardRow(**row) if row else None


async def boards(conn: Conn, problem_id: int, problem_version: int) -> list[BoardSummary]:
    """The boards of one problem version that have entries, fullest first."""
    # The sizes the triggers of V014 keep, rather than a count of every board of the problem on each read.
    rows = await conn.fetch(
        """
        SELECT gpu_type, dtype, method, entries FROM leaderboard_sizes
        WHERE problem_id = $1 AND problem_version = $2 AND language = 'any' AND entries > 0
        ORDER BY entries DESC, gpu_type, dtype, method
        """,
        problem_id,
        problem_version,
    )
    return [BoardSummary(**r) for r in rows]


async def board_methods(conn: Conn, problem_id: int, problem_version: int, gpu_type: str, dtype: str) -> list[str]:
    """The timing methods that have a board for (problem, version, GPU type, dtype), fullest first."""
    rows = await conn.fetch(
        """
        SELECT method FROM leaderboard_sizes
        WHERE problem_id = $1 AND problem_version = $2 AND gpu_type = $3 AND dtype = $4 AND language = 'any'
          AND entries > 0
        ORDER BY entries DESC, method
        """,
        problem_id,
        problem_version,
        gpu_type,
        dtype,
    )
    return [r["method"] for r in rows]
