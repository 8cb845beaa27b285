"""Contests, their problems, targets and invitations, the frozen standings, and ratings: every query of them.

The live boards are not stored: `board_cells` computes them from `submissions` whenever they are read, so a late
result, an invalidation or a ban shows at once. Only the board as it froze (`contest_standings`,
`contest_standing_cells`) and the ratings it produced are kept. The rules they follow are in core/contests/.

Kept as one module: every query of the contest tables, as the store keeps one module per group of tables; the rules
they serve are split by feature in core/contests/.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from core.errors import ContestExistsError
from core.store.pool import Conn


@dataclass(frozen=True)
class Contest:
    id: int
    slug: str
    title: str
    starts_at: datetime
    ends_at: datetime
    visibility: str
    scoring: str
    created_by: int | None
    created_at: datetime
    cancelled_at: datetime | None
    frozen_at: datetime | None
    rated_at: datetime | None
    # The contest's own limit on ranked runs while it runs (None: the practice limit applies).
    ranked_burst: int | None = None
    ranked_per_hour: float | None = None
    # The share of its targets' runner slots kept for its ranked runs while it runs (None: none; V012).
    reserve_share: float | None = None


@dataclass(frozen=True)
class ContestProblem:
    problem_id: int
    slug: str
    title: str
    problem_version: int
    position: int
    public_before: bool


@dataclass(frozen=True)
class Target:
    gpu_type: str
    dtype: str


@dataclass(frozen=True)
class BoardCell:
    """A user's best run in one column (problem, GPU type, dtype) of a board, and its rank there (from 1).

    `submission_id` and `score` are None for a frozen cell that holds the penalty rank (no run)."""

    problem_id: int
    gpu_type: str
    dtype: str
    user_id: int
    display_name: str
    rank: int
    submission_id: int | None
    score: float | None
    method: str | None


@dataclass(frozen=True)
class StandingRow:
    user_id: int
    display_name: str
    place: int
    total: int


@dataclass(frozen=True)
class StoredRating:
    user_id: int
    rating: float
    rd: float
    volatility: float
    contests: int


@dataclass(frozen=True)
class RatingChange:
    """One user's rating before and after one contest: a row of `rating_history`."""

    user_id: int
    contest_id: int
    place: int
    rating_before: float
    rd_before: float
    volatility_before: float
    rating_after: float
    rd_after: float
    volatility_after: float


_CONTEST_COLUMNS = """id, slug, title, starts_at, ends_at, visibility, scoring, created_by, created_at, cancelled_at,
    frozen_at, rated_at, ranked_burst, ranked_per_hour, reserve_share"""


# -- the contest ------------------------------------------------------------------------------------------------


async def insert_contest(
    conn: Conn,
    *,
    slug: str,
    title: str,
    starts_at: datetime,
    ends_at: datetime,
    visibility: str,
    created_by: int | None,
    ranked_limit: tuple[int, float] | None = None,
    reserve_share: float | None = None,
) -> Contest:
    burst, per_hour = ranked_limit if ranked_limit is not None else (None, None)
    try:
        row = await conn.fetchrow(
            f"""INSERT INTO contests (slug, title, starts_at, ends_at, visibility, created_by, ranked_burst,
                                      ranked_per_hour, reserve_share)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {_CONTEST_COLUMNS}""",
            slug,
            title,
            starts_at,
            ends_at,
            visibility,
            created_by,
            burst,
            per_hour,
            reserve_share,
        )
    except asyncpg.UniqueViolationError as exc:
        raise ContestExistsError(f"A contest named `{slug}` exists already; pick another slug.") from exc
    return Contest(**row)


async def get_contest(conn: Conn, slug: str, *, lock: bool = False) -> Contest | None:
    """The contest; `lock` holds its row until the transaction ends (edits, cancel, freeze, amend)."""
    suffix = " FOR UPDATE" if lock else ""
    row = await conn.fetchrow(f"SELECT {_CONTEST_COLUMNS} FROM contests WHERE slug = $1{suffix}", slug)
    return Contest(**row) if row else None


async def lock_contest_by_id(conn: Conn, contest_id: int) -> Contest | None:
    row = await conn.fetchrow(f"SELECT {_CONTEST_COLUMNS} FROM contests WHERE id = $1 FOR UPDATE", contest_id)
    return Contest(**row) if row else None


async def list_contests(conn: Conn, *, include_cancelled: bool = False) -> list[Contest]:
    """Every contest, the latest start first."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests WHERE $1 OR cancelled_at IS NULL
        ORDER BY starts_at DESC, id DESC""",
        include_cancelled,
    )
    return [Contest(**r) for r in rows]


async def update_contest(
    conn: Conn,
    contest_id: int,
    *,
    title: str,
    starts_at: datetime,
    ends_at: datetime,
    visibility: str,
    reserve_share: float | None,
) -> Contest:
    row = await conn.fetchrow(
        f"""UPDATE contests SET title = $2, starts_at = $3, ends_at = $4, visibility = $5, reserve_share = $6,
            updated_at = now()
        WHERE id = $1 RETURNING {_CONTEST_COLUMNS}""",
        contest_id,
        title,
        starts_at,
        ends_at,
        visibility,
        reserve_share,
    )
    return Contest(**row)


async def cancel_contest(conn: Conn, contest_id: int, cancelled_by: int | None, at: datetime) -> Contest:
    row = await conn.fetchrow(
        f"""UPDATE contests SET cancelled_at = $3, cancelled_by = $2, updated_at = now() WHERE id = $1
        RETURNING {_CONTEST_COLUMNS}""",
        contest_id,
        cancelled_by,
        at,
    )
    return Contest(**row)


async def set_problems(conn: Conn, contest_id: int, problems: Sequence[tuple[int, int, bool]]) -> None:
    """Replace the contest's problems with (problem id, version, public before) in this order."""
    await conn.execute("DELETE FROM contest_problems WHERE contest_id = $1", contest_id)
    await conn.executemany(
        """INSERT INTO contest_problems (contest_id, problem_id, problem_version, position, public_before)
        VALUES ($1, $2, $3, $4, $5)""",
        [(contest_id, pid, version, i, public) for i, (pid, version, public) in enumerate(problems)],
    )


async def set_targets(conn: Conn, contest_id: int, targets: Iterable[Target]) -> None:
    await conn.execute("DELETE FROM contest_targets WHERE contest_id = $1", contest_id)
    await conn.executemany(
        "INSERT INTO contest_targets (contest_id, gpu_type, dtype) VALUES ($1, $2, $3)",
        [(contest_id, t.gpu_type, t.dtype) for t in targets],
    )


async def problems_of(conn: Conn, contest_id: int) -> list[ContestProblem]:
    rows = await conn.fetch(
        """SELECT cp.problem_id, p.slug, p.title, cp.problem_version, cp.position, cp.public_before
        FROM contest_problems cp JOIN problems p ON p.id = cp.problem_id
        WHERE cp.contest_id = $1 ORDER BY cp.position""",
        contest_id,
    )
    return [ContestProblem(**r) for r in rows]


async def targets_of(conn: Conn, contest_id: int) -> list[Target]:
    rows = await conn.fetch(
        "SELECT gpu_type, dtype FROM contest_targets WHERE contest_id = $1 ORDER BY gpu_type, dtype", contest_id
    )
    return [Target(**r) for r in rows]


async def problem_is_public(conn: Conn, problem_id: int) -> bool:
    """Whether anyone could know the problem already: it is built into the runners (its current version has no
    stored source, so its code is in the repository) or somebody has submitted to it."""
    value: bool = await conn.fetchval(
        """SELECT EXISTS (SELECT 1 FROM problems p JOIN problem_versions v
                          ON v.problem_id = p.id AND v.version = p.current_version
                          WHERE p.id = $1 AND v.source IS NULL)
               OR EXISTS (SELECT 1 FROM submissions s WHERE s.problem_id = $1)""",
        problem_id,
    )
    return value


async def invite(conn: Conn, contest_id: int, user_ids: Iterable[int], invited_by: int | None) -> list[int]:
    """Invite users; returns those who were not invited before."""
    rows = await conn.fetch(
        """INSERT INTO contest_invitations (contest_id, user_id, invited_by)
        SELECT $1, u, $3 FROM unnest($2::bigint[]) AS u
        ON CONFLICT (contest_id, user_id) DO NOTHING RETURNING user_id""",
        contest_id,
        list(user_ids),
        invited_by,
    )
    return [r["user_id"] for r in rows]


async def invited(conn: Conn, contest_id: int) -> list[int]:
    rows = await conn.fetch(
        "SELECT user_id FROM contest_invitations WHERE contest_id = $1 ORDER BY user_id", contest_id
    )
    return [r["user_id"] for r in rows]


# -- the live board ---------------------------------------------------------------------------------------------

# The ranked runs of contest $1 created in [$2, $3) ($3 NULL: no end): on a contest problem at its pinned version,
# on a target, by a user who may enter (invited, for an invite-only contest) and is not banned. Shared by the board
# and by the count of jobs the freeze waits for, so that the two can never disagree on what counts.
_ENTERED = """
    FROM contests c
    JOIN contest_problems cp ON cp.contest_id = c.id
    JOIN submissions s ON s.problem_id = cp.problem_id AND s.problem_version = cp.problem_version
    JOIN contest_targets ct ON ct.contest_id = c.id AND ct.gpu_type = s.gpu_type AND ct.dtype = s.dtype
    WHERE c.id = $1 AND s.mode = 'ranked'
      AND s.created_at >= $2 AND ($3::timestamptz IS NULL OR s.created_at < $3)
      AND (c.visibility = 'public'
           OR EXISTS (SELECT 1 FROM contest_invitations i WHERE i.contest_id = c.id AND i.user_id = s.user_id))
      AND NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = s.user_id AND b.lifted_at IS NULL)
"""

# Each user's best run per column and timing method; a column ranks the runs of its fullest method only, as the
# problem boards do (times measured by different methods do not compare). Ties: the earlier run, then the lower id.
_BOARD = f"""
WITH eligible AS (
    SELECT s.id, s.user_id, s.problem_id, s.gpu_type, s.dtype, s.method, s.score, s.created_at
    {_ENTERED}
      AND s.status = 'passed' AND NOT s.invalidated AND s.score IS NOT NULL AND s.method IS NOT NULL
), best AS (
    SELECT DISTINCT ON (problem_id, gpu_type, dtype, method, user_id) * FROM eligible
    ORDER BY problem_id, gpu_type, dtype, method, user_id, score DESC, created_at, id
), fullest AS MATERIALIZED (
    -- Materialized: inlined, the planner (which expects one row of `best`) recomputed it for every row of `best`.
    SELECT DISTINCT ON (problem_id, gpu_type, dtype) problem_id, gpu_type, dtype, method
    FROM best GROUP BY problem_id, gpu_type, dtype, method
    ORDER BY problem_id, gpu_type, dtype, count(*) DESC, method
)
SELECT b.problem_id, b.gpu_type, b.dtype, b.user_id, u.display_name, b.id AS submission_id, b.score, b.method,
       row_number() OVER (PARTITION BY b.problem_id, b.gpu_type, b.dtype
                          ORDER BY b.score DESC, b.created_at, b.id) AS rank
FROM best b
JOIN fullest f USING (problem_id, gpu_type, dtype, method)
JOIN users u ON u.id = b.user_id
ORDER BY b.problem_id, b.gpu_type, b.dtype, rank
"""


async def board_cells(conn: Conn, contest_id: int, since: datetime, until: datetime | None) -> list[BoardCell]:
    """Every ranked cell of the board of runs created in [since, until) (`until` None: no end)."""
    rows = await conn.fetch(_BOARD, contest_id, since, until)
    return [BoardCell(**r) for r in rows]


async def pending_jobs(conn: Conn, contest_id: int, since: datetime, until: datetime) -> list[int]:
    """The live jobs (queued, dispatched, running) of runs that would count on the board of [since, until)."""
    rows = await conn.fetch(
        f"""SELECT j.id FROM jobs j WHERE j.state IN ('queued', 'dispatched', 'running')
        AND j.submission_id IN (SELECT s.id {_ENTERED}) ORDER BY j.id""",
        contest_id,
        since,
        until,
    )
    return [r["id"] for r in rows]


# -- what a run counts for --------------------------------------------------------------------------------------


async def contests_on_problem(conn: Conn, problem_id: int) -> list[Contest]:
    """The contests (not cancelled) that hold the problem, at any version, the earliest start first."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests c
        WHERE c.cancelled_at IS NULL
          AND EXISTS (SELECT 1 FROM contest_problems cp WHERE cp.contest_id = c.id AND cp.problem_id = $1)
        ORDER BY c.starts_at, c.id""",
        problem_id,
    )
    return [Contest(**r) for r in rows]


@dataclass(frozen=True)
class EntryFacts:
    """Whether the boards' own rule (`_ENTERED`) takes a submission on the board of [since, until), and the facts
    about its author that explain a refusal."""

    entered: bool
    invited: bool
    banned: bool


async def entry_facts(
    conn: Conn, contest_id: int, submission_id: int, since: datetime, until: datetime | None
) -> EntryFacts:
    row = await conn.fetchrow(
        f"""SELECT
            EXISTS (SELECT 1 {_ENTERED} AND s.id = $4) AS entered,
            EXISTS (SELECT 1 FROM contest_invitations i JOIN submissions s ON s.user_id = i.user_id
                    WHERE i.contest_id = $1 AND s.id = $4) AS invited,
            EXISTS (SELECT 1 FROM bans b JOIN submissions s ON s.user_id = b.user_id
                    WHERE s.id = $4 AND b.lifted_at IS NULL) AS banned""",
        contest_id,
        since,
        until,
        submission_id,
    )
    return EntryFacts(**row)


# -- freezing ---------------------------------------------------------------------------------------------------


async def due_contests(conn: Conn, now: datetime) -> list[Contest]:
    """Contests that have ended and are neither frozen nor cancelled, the earliest end first."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests
        WHERE ends_at <= $1 AND frozen_at IS NULL AND cancelled_at IS NULL ORDER BY ends_at, id""",
        now,
    )
    return [Contest(**r) for r in rows]


async def write_standings(
    conn: Conn, contest_id: int, standings: Sequence[StandingRow], cells: Sequence[BoardCell]
) -> None:
    """Replace the contest's stored standings (and their cells) with these. Call inside the freeze's or the
    amendment's transaction, with the contest row locked."""
    await conn.execute("DELETE FROM contest_standings WHERE contest_id = $1", contest_id)  # cascades to the cells
    await conn.executemany(
        "INSERT INTO contest_standings (contest_id, user_id, place, total) VALUES ($1, $2, $3, $4)",
        [(contest_id, s.user_id, s.place, s.total) for s in standings],
    )
    await conn.executemany(
        """INSERT INTO contest_standing_cells (contest_id, user_id, problem_id, gpu_type, dtype, rank, submission_id,
        score, method) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)""",
        [
            (contest_id, c.user_id, c.problem_id, c.gpu_type, c.dtype, c.rank, c.submission_id, c.score, c.method)
            for c in cells
        ],
    )


async def mark_frozen(conn: Conn, contest_id: int, at: datetime) -> None:
    await conn.execute("UPDATE contests SET frozen_at = $2 WHERE id = $1 AND frozen_at IS NULL", contest_id, at)


async def claim_waiting_notice(conn: Conn, contest_id: int, at: datetime) -> bool:
    """Whether the caller is the first to announce that this ended contest waits for its last runs."""
    claimed = await conn.fetchval(
        "UPDATE contests SET waiting_announced_at = $2 WHERE id = $1 AND waiting_announced_at IS NULL RETURNING id",
        contest_id,
        at,
    )
    return claimed is not None


async def claim_podium(conn: Conn, contest_id: int, at: datetime) -> Contest | None:
    """The frozen contest, when the caller is the first to announce its podium; None when another was."""
    row = await conn.fetchrow(
        f"""UPDATE contests SET podium_announced_at = $2
        WHERE id = $1 AND frozen_at IS NOT NULL AND podium_announced_at IS NULL RETURNING {_CONTEST_COLUMNS}""",
        contest_id,
        at,
    )
    return Contest(**row) if row else None


async def unannounced_frozen(conn: Conn) -> list[int]:
    """Frozen contests whose podium nobody has claimed yet (frozen by a process that stopped before announcing)."""
    rows = await conn.fetch(
        "SELECT id FROM contests WHERE frozen_at IS NOT NULL AND podium_announced_at IS NULL ORDER BY frozen_at, id"
    )
    return [r["id"] for r in rows]


async def frozen_standings(conn: Conn, contest_id: int) -> list[StandingRow]:
    """The frozen standings, best place first (ties by user id)."""
    rows = await conn.fetch(
        """SELECT s.user_id, u.display_name, s.place, s.total FROM contest_standings s JOIN users u ON u.id = s.user_id
        WHERE s.contest_id = $1 ORDER BY s.place, s.user_id""",
        contest_id,
    )
    return [StandingRow(**r) for r in rows]


async def frozen_cells(conn: Conn, contest_id: int) -> list[BoardCell]:
    rows = await conn.fetch(
        """SELECT c.problem_id, c.gpu_type, c.dtype, c.user_id, u.display_name, c.rank, c.submission_id, c.score,
               c.method
        FROM contest_standing_cells c JOIN users u ON u.id = c.user_id
        WHERE c.contest_id = $1 ORDER BY c.problem_id, c.gpu_type, c.dtype, c.rank, c.user_id""",
        contest_id,
    )
    return [BoardCell(**r) for r in rows]


# -- ratings ----------------------------------------------------------------------------------------------------


async def ratings_of(conn: Conn, user_ids: Sequence[int]) -> dict[int, StoredRating]:
    rows = await conn.fetch(
        "SELECT user_id, rating, rd, volatility, contests FROM ratings WHERE user_id = ANY($1::bigint[])",
        list(user_ids),
    )
    return {r["user_id"]: StoredRating(**r) for r in rows}


# One key for every process that rates contests (core/store/migrate.py holds 0x4B41_0001).
_RATINGS_LOCK_KEY = 0x4B41_0002


async def lock_ratings(conn: Conn) -> None:
    """Hold the ratings until the transaction ends: contests are rated one at a time, each against the ratings the
    previous one left (a rating also ages every player who sat the contest out, so two at once would interleave)."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", _RATINGS_LOCK_KEY)


async def unrated_frozen_contests(conn: Conn) -> list[Contest]:
    """Frozen contests that are not rated yet, in the order they are rated: by end, then id. Normally only the one
    being frozen; after a change of rating method (migration V008), every contest that was rated before."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests
        WHERE frozen_at IS NOT NULL AND rated_at IS NULL AND cancelled_at IS NULL ORDER BY ends_at, id"""
    )
    return [Contest(**r) for r in rows]


async def record_ratings(
    conn: Conn, contest_id: int, changes: Sequence[RatingChange], method: str, at: datetime
) -> None:
    """Store the contest's rating changes, computed by `method`, and mark it rated. Call inside the transaction
    that checked `rated_at` under the contest's row lock; the history's primary key refuses a second rating of the
    same contest."""
    await conn.executemany(
        """INSERT INTO rating_history (user_id, contest_id, place, rating_before, rd_before, volatility_before,
        rating_after, rd_after, volatility_after, method) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)""",
        [
            (
                c.user_id,
                contest_id,
                c.place,
                c.rating_before,
                c.rd_before,
                c.volatility_before,
                c.rating_after,
                c.rd_after,
                c.volatility_after,
                method,
            )
            for c in changes
        ],
    )
    await conn.executemany(
        """INSERT INTO ratings (user_id, rating, rd, volatility, contests, last_contest_id, updated_at)
        VALUES ($1, $2, $3, $4, 1, $5, $6)
        ON CONFLICT (user_id) DO UPDATE SET rating = EXCLUDED.rating, rd = EXCLUDED.rd,
            volatility = EXCLUDED.volatility, contests = ratings.contests + 1, periods_absent = 0,
            last_contest_id = EXCLUDED.last_contest_id, updated_at = EXCLUDED.updated_at""",
        [(c.user_id, c.rating_after, c.rd_after, c.volatility_after, contest_id, at) for c in changes],
    )
    await conn.execute("UPDATE contests SET rated_at = $2 WHERE id = $1", contest_id, at)


async def ratings_except(conn: Conn, user_ids: Sequence[int]) -> list[StoredRating]:
    """Every stored rating but these users': the players who sat a contest out."""
    rows = await conn.fetch(
        """SELECT user_id, rating, rd, volatility, contests FROM ratings WHERE user_id <> ALL($1::bigint[])
        ORDER BY user_id""",
        list(user_ids),
    )
    return [StoredRating(**r) for r in rows]


async def record_absences(conn: Conn, aged_rds: Sequence[tuple[int, float]], at: datetime) -> None:
    """Give each (user, RD) its aged RD and count one more rated contest sat out."""
    await conn.executemany(
        "UPDATE ratings SET rd = $2, periods_absent = periods_absent + 1, updated_at = $3 WHERE user_id = $1",
        [(user_id, rd, at) for user_id, rd in aged_rds],
    )


@dataclass(frozen=True)
class ArchivedRatingChange:
    """A rating change given by a method no longer in use, kept by the migration that replaced it."""

    method: str
    change: RatingChange
    rated_at: datetime


async def archived_rating_history(conn: Conn, user_id: int) -> list[ArchivedRatingChange]:
    """The user's rating changes under earlier methods, oldest contest first."""
    rows = await conn.fetch(
        """SELECT a.method, a.rated_at, a.user_id, a.contest_id, a.place, a.rating_before, a.rd_before,
               a.volatility_before, a.rating_after, a.rd_after, a.volatility_after
        FROM rating_archive a JOIN contests c ON c.id = a.contest_id
        WHERE a.user_id = $1 ORDER BY a.method, c.ends_at, c.id""",
        user_id,
    )
    return [
        ArchivedRatingChange(r["method"], RatingChange(**{k: r[k] for k in _CHANGE_FIELDS}), r["rated_at"])
        for r in rows
    ]


_CHANGE_FIELDS = tuple(RatingChange.__dataclass_fields__)


async def rating_history(conn: Conn, user_id: int) -> list[RatingChange]:
    """The user's rating changes, oldest contest first."""
    rows = await conn.fetch(
        """SELECT h.user_id, h.contest_id, h.place, h.rating_before, h.rd_before, h.volatility_before,
               h.rating_after, h.rd_after, h.volatility_after
        FROM rating_history h JOIN contests c ON c.id = h.contest_id
        WHERE h.user_id = $1 ORDER BY c.ends_at, c.id""",
        user_id,
    )
    return [RatingChange(**r) for r in rows]


@dataclass(frozen=True)
class RatedUser:
    """A row of the rating table: a rated user who is not banned."""

    user_id: int
    display_name: str
    rating: float
    rd: float
    volatility: float
    contests: int


async def rating_table(conn: Conn) -> list[RatedUser]:
    """Every rated user who is not banned, by conservative rating (rating - 2·RD), best first; ties by user id."""
    rows = await conn.fetch(
        """SELECT r.user_id, u.display_name, r.rating, r.rd, r.volatility, r.contests
        FROM ratings r JOIN users u ON u.id = r.user_id
        WHERE NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = r.user_id AND b.lifted_at IS NULL)
        ORDER BY r.rating - 2 * r.rd DESC, r.user_id"""
    )
    return [RatedUser(**r) for r in rows]


async def contest_rating_changes(conn: Conn, contest_id: int) -> list[RatingChange]:
    rows = await conn.fetch(
        """SELECT user_id, contest_id, place, rating_before, rd_before, volatility_before, rating_after, rd_after,
               volatility_after
        FROM rating_history WHERE contest_id = $1 ORDER BY place, user_id""",
        contest_id,
    )
    return [RatingChange(**r) for r in rows]


# -- what contests hide -----------------------------------------------------------------------------------------


async def hidden_problem_ids(conn: Conn, now: datetime) -> set[int]:
    """Problems that a contest not yet started (and not cancelled) hides: those that were not public before."""
    rows = await conn.fetch(
        """SELECT DISTINCT cp.problem_id FROM contest_problems cp JOIN contests c ON c.id = cp.contest_id
        WHERE c.starts_at > $1 AND c.cancelled_at IS NULL AND NOT cp.public_before""",
        now,
    )
    return {r["problem_id"] for r in rows}


async def contest_ends_of_submission(conn: Conn, submission_id: int) -> list[datetime]:
    """The end of every contest (not cancelled) whose contest phase this submission belongs to: a ranked run on
    one of its problems and targets, created between its start and its end."""
    rows = await conn.fetch(
        """SELECT c.ends_at FROM submissions s
        JOIN contest_problems cp ON cp.problem_id = s.problem_id AND cp.problem_version = s.problem_version
        JOIN contests c ON c.id = cp.contest_id
        JOIN contest_targets ct ON ct.contest_id = c.id AND ct.gpu_type = s.gpu_type AND ct.dtype = s.dtype
        WHERE s.id = $1 AND s.mode = 'ranked' AND c.cancelled_at IS NULL
          AND s.created_at >= c.starts_at AND s.created_at < c.ends_at""",
        submission_id,
    )
    return [r["ends_at"] for r in rows]


async def reveals_code(conn: Conn, user_id: int) -> bool:
    value: bool = await conn.fetchval("SELECT reveal_code FROM users WHERE id = $1", user_id)
    return value


async def set_reveals_code(conn: Conn, user_id: int, allowed: bool) -> None:
    await conn.execute("UPDATE users SET reveal_code = $2 WHERE id = $1", user_id, allowed)


async def running_limited_contests(conn: Conn, now: datetime) -> list[Contest]:
    """Contests running at `now` that set their own limit on ranked runs (their buckets are `contest:<id>`)."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests
        WHERE ranked_burst IS NOT NULL AND cancelled_at IS NULL AND starts_at <= $1 AND $1 < ends_at
        ORDER BY id""",
        now,
    )
    return [Contest(**row) for row in rows]


# -- before the start: the warning that a target has no runner --------------------------------------------------


async def starting_unwarned(conn: Conn, now: datetime, until: datetime) -> list[Contest]:
    """Contests that start in (now, until], are not cancelled, and whose start warning nobody has claimed."""
    rows = await conn.fetch(
        f"""SELECT {_CONTEST_COLUMNS} FROM contests
        WHERE starts_at > $1 AND starts_at <= $2 AND cancelled_at IS NULL AND start_warning_at IS NULL
        ORDER BY starts_at, id""",
        now,
        until,
    )
    return [Contest(**r) for r in rows]


async def claim_start_warning(conn: Conn, contest_id: int, at: datetime) -> bool:
    """Whether the caller is the first to warn, before its start, that a target of this contest has no runner."""
    claimed = await conn.fetchval(
        "UPDATE contests SET start_warning_at = $2 WHERE id = $1 AND start_warning_at IS NULL RETURNING id",
        contest_id,
        at,
    )
    return claimed is not None


async def clear_start_warning(conn: Conn, contest_id: int) -> None:
    """Forget the start warning: the contest's targets or start changed, so it is checked again."""
    await conn.execute("UPDATE contests SET start_warning_at = NULL WHERE id = $1", contest_id)
