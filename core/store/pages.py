"""Reads of the public web pages that no other front end makes: a board's tied places and runtimes, one page of the
rating table, and a competitor's best results and recent runs.

Each read is bounded by what a page shows (a page of rows, a user's boards, a limit), never by the size of the
store: the pages are read by anyone, as often as they like.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from core.store.contests import RatedUser
from core.store.leaderboard import BoardKey
from core.store.pool import Conn


async def score_place(conn: Conn, key: BoardKey, language: str, score: float) -> int:
    """The place a `score` takes on the board with ties shared: one plus the entries with a higher score (a range
    of the board's rank index, as long as the board above that score)."""
    count = await conn.fetchval(
        """SELECT count(*) FROM leaderboard_entries
        WHERE problem_id = $1 AND problem_version = $2 AND gpu_type = $3 AND dtype = $4 AND method = $5
          AND language = $6 AND score > $7""",
        key.problem_id,
        key.problem_version,
        key.gpu_type,
        key.dtype,
        key.method,
        language,
        score,
    )
    return 1 + int(count)


async def board_size(conn: Conn, key: BoardKey, language: str) -> int:
    """How many entries the board has (the count the triggers of V014 keep)."""
    count = await conn.fetchval(
        """SELECT entries FROM leaderboard_sizes
        WHERE problem_id = $1 AND problem_version = $2 AND gpu_type = $3 AND dtype = $4 AND method = $5
          AND language = $6""",
        key.problem_id,
        key.problem_version,
        key.gpu_type,
        key.dtype,
        key.method,
        language,
    )
    return int(count or 0)


async def runtimes_us(conn: Conn, submission_ids: Sequence[int]) -> dict[int, float]:
    """Each submission's runtime as a board shows it beside the score: the geometric mean of its latest run's
    median runtime per timed case, in µs. A submission that timed nothing is left out."""
    rows = await conn.fetch(
        """SELECT s.id, exp(avg(ln(c.runtime_median_us))) AS runtime
        FROM submissions s JOIN case_results c ON c.job_id = s.result_job_id AND c.kind = 'benchmark'
        WHERE s.id = ANY($1::bigint[]) AND c.runtime_median_us > 0
        GROUP BY s.id""",
        list(submission_ids),
    )
    return {r["id"]: r["runtime"] for r in rows}


@dataclass(frozen=True)
class PlacedRating:
    """A row of the rating table with its place, shared by equal conservative ratings."""

    place: int
    user: RatedUser


_RATED = """FROM ratings r JOIN users u ON u.id = r.user_id
    WHERE NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = r.user_id AND b.lifted_at IS NULL)"""


async def rating_page(conn: Conn, offset: int, limit: int) -> tuple[int, list[PlacedRating]]:
    """How many users are rated (banned ones left out), and rows offset+1 .. offset+limit of the rating table by
    conservative rating (rating - 2·RD), best first, ties by user id; equal conservative ratings share a place."""
    total = int(await conn.fetchval(f"SELECT count(*) {_RATED}"))
    rows = await conn.fetch(
        f"""SELECT rank() OVER (ORDER BY r.rating - 2 * r.rd DESC) AS place, r.user_id, u.display_name, r.rating,
               r.rd, r.volatility, r.contests
        {_RATED}
        ORDER BY r.rating - 2 * r.rd DESC, r.user_id
        OFFSET $1 LIMIT $2""",
        offset,
        limit,
    )
    placed = [PlacedRating(r["place"], RatedUser(**{k: r[k] for k in RatedUser.__dataclass_fields__})) for r in rows]
    return total, placed


# Places on a competitor's page are counted up to here: a count costs one index entry per entry ahead, and a player
# on a hundred boards would have millions counted at ten million submissions. Past it the page says "1,000+"; the
# board itself numbers every row.
PLACES_COUNTED = 1000


@dataclass(frozen=True)
class BestResult:
    """A user's entry on the fullest board they are on of one problem's current version: their best ranked run there
    and its place."""

    problem_id: int
    slug: str
    title: str
    gpu_type: str
    dtype: str
    method: str
    score: float
    score_metric: str
    submission_id: int
    submitted_at: datetime
    place: int
    """Shared with equal scores: one plus the entries with a higher score, counted up to PLACES_COUNTED (a place
    past it reads PLACES_COUNTED + 1)."""
    entries: int
    """How many are on that board."""
    boards: int
    """How many boards of the problem the user is on (this one included)."""


# The ranked runs a board takes, as the partial index `submissions_user_ranked` (V002) selects them, of user $1.
_RANKED_RUNS = """s.user_id = $1 AND s.mode = 'ranked' AND s.status = 'passed' AND NOT s.invalidated
    AND s.score IS NOT NULL AND s.method IS NOT NULL"""


async def best_results(conn: Conn, user_id: int) -> list[BestResult]:
    """The user's entry on the fullest board they are on of each problem's current version, by slug.

    `leaderboard_entries` has no index that leads with the user, and the user's ranked runs can be hundreds of
    thousands: their boards are found by a skip scan of the ranked runs' index (one probe per board), and each entry
    then by its key. At 10 million submissions: 1 to 13 ms for the boards, where reading the runs took up to 1 s."""
    rows = await conn.fetch(
        f"""WITH RECURSIVE boards AS (
            -- The boards the user ran on, one index probe each: a skip scan of `submissions_user_ranked`.
            (SELECT s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method FROM submissions s
             WHERE {_RANKED_RUNS}
             ORDER BY s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method LIMIT 1)
            UNION ALL
            SELECT n.* FROM boards b CROSS JOIN LATERAL (
                SELECT s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method FROM submissions s
                WHERE {_RANKED_RUNS}
                  AND (s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method)
                      > (b.problem_id, b.problem_version, b.gpu_type, b.dtype, b.method)
                ORDER BY s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method LIMIT 1) n
        ), mine AS (
            SELECT e.*, z.entries, count(*) OVER (PARTITION BY e.problem_id) AS boards,
                   row_number() OVER (PARTITION BY e.problem_id ORDER BY z.entries DESC, e.gpu_type, e.dtype, e.method)
                   AS n
            FROM boards b
            JOIN problems p ON p.id = b.problem_id AND p.current_version = b.problem_version
            JOIN leaderboard_entries e ON e.problem_id = b.problem_id AND e.problem_version = b.problem_version
                 AND e.gpu_type = b.gpu_type AND e.dtype = b.dtype AND e.method = b.method AND e.language = 'any'
                 AND e.user_id = $1
            JOIN leaderboard_sizes z ON z.problem_id = e.problem_id AND z.problem_version = e.problem_version
                 AND z.gpu_type = e.gpu_type AND z.dtype = e.dtype AND z.method = e.method AND z.language = e.language
        )
        SELECT m.problem_id, p.slug, p.title, m.gpu_type, m.dtype, m.method, m.score, v.score_metric,
               m.submission_id, m.submitted_at, m.entries, m.boards,
               1 + (SELECT count(*) FROM (
                        SELECT 1 FROM leaderboard_entries a
                        WHERE a.problem_id = m.problem_id AND a.problem_version = m.problem_version
                          AND a.gpu_type = m.gpu_type AND a.dtype = m.dtype AND a.method = m.method
                          AND a.language = m.language AND a.score > m.score
                        LIMIT $2) ahead) AS place
        FROM mine m
        JOIN problems p ON p.id = m.problem_id
        JOIN problem_versions v ON v.problem_id = m.problem_id AND v.version = m.problem_version
        WHERE m.n = 1
        ORDER BY p.slug""",
        user_id,
        PLACES_COUNTED,
    )
    return [BestResult(**r) for r in rows]


@dataclass(frozen=True)
class RecentRun:
    """One of a user's submissions as a list shows it."""

    id: int
    problem_id: int
    slug: str
    mode: str
    status: str
    language: str
    dtype: str
    gpu_type: str
    score: float | None
    score_metric: str | None
    invalidated: bool
    created_at: datetime


async def recent_runs(conn: Conn, user_id: int, limit: int, *, ranked_only: bool) -> list[RecentRun]:
    """The user's latest `limit` submissions, newest first: only the ranked ones (those anyone may read) when
    `ranked_only`, else every mode (what the user themselves may read)."""
    rows = await conn.fetch(
        """SELECT s.id, s.problem_id, p.slug, s.mode, s.status, s.language, s.dtype, s.gpu_type, s.score,
               s.score_metric, s.invalidated, s.created_at
        FROM submissions s JOIN problems p ON p.id = s.problem_id
        WHERE s.user_id = $1 AND (NOT $2 OR s.mode = 'ranked')
        ORDER BY s.created_at DESC, s.id DESC
        LIMIT $3""",
        user_id,
        ranked_only,
        limit,
    )
    return [RecentRun(**r) for r in rows]
