"""What a submission's owner reads of it outside Discord: its jobs' moves in order (the events of the public API,
served by any replica from the store), its cases as its runner reports them (a notification on CASE_CHANNEL, heard
by every replica that listens, kept nowhere), and the owner's submissions one page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from contract.names import JobState
from core.store.pool import Conn
from core.store.submissions import _SELECT as SUBMISSION_SELECT
from core.store.submissions import Submission

CASE_CHANNEL = "arena_submission_cases"
"""The channel a dispatcher tells each finished case on; its payload is JSON with the submission's id (`s`)."""
MAX_NOTIFY_BYTES = 7900
"""PostgreSQL refuses a notification payload of 8000 bytes or more."""


@dataclass(frozen=True)
class JobMove:
    """One logged move of one of the submission's jobs; `id` orders every move of the store."""

    id: int
    job_id: int
    from_state: JobState | None
    to_state: JobState
    attempt: int
    at: datetime


async def moves_after(conn: Conn, submission_id: int, after_id: int, limit: int = 200) -> list[JobMove]:
    """The moves of the submission's jobs logged after the move `after_id` (0: from the first), oldest first."""
    rows = await conn.fetch(
        """
        SELECT t.id, t.job_id, t.from_state, t.to_state, t.attempt, t.at
        FROM job_transitions t
        WHERE t.job_id IN (SELECT id FROM jobs WHERE submission_id = $1) AND t.id > $2
        ORDER BY t.id
        LIMIT $3
        """,
        submission_id,
        after_id,
        limit,
    )
    return [JobMove(**r) for r in rows]


async def latest_move_id(conn: Conn) -> int:
    """The id of the latest logged move of any job (0: none yet)."""
    return int(await conn.fetchval("SELECT coalesce(max(id), 0) FROM job_transitions"))


async def moved_since(conn: Conn, after_id: int, also: list[int], limit: int = 5000) -> list[tuple[int, int]]:
    """(move id, submission id) of every move logged after `after_id`, and of the moves `also` names (ids passed
    over earlier whose transactions may have committed since), oldest first: one query for every submission a
    process follows."""
    rows = await conn.fetch(
        """
        SELECT t.id, j.submission_id
        FROM job_transitions t JOIN jobs j ON j.id = t.job_id
        WHERE t.id > $1 OR t.id = ANY($2::bigint[])
        ORDER BY t.id
        LIMIT $3
        """,
        after_id,
        also,
        limit,
    )
    return [(r["id"], r["submission_id"]) for r in rows]


async def notify_cases(conn: Conn, payloads: list[str]) -> None:
    """Tell every listener of CASE_CHANNEL (any replica's event streams) of finished cases, a notification each, in
    one statement and so one commit; nothing is stored."""
    await conn.execute("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", CASE_CHANNEL, payloads)


async def page_of_user(
    conn: Conn, user_id: int, *, before_id: int | None, problem_id: int | None, limit: int
) -> list[Submission]:
    """The user's submissions older than `before_id` (None: from the newest), newest first; the next page starts
    before the last one's id, so pages never overlap or skip one while new ones arrive."""
    rows = await conn.fetch(
        SUBMISSION_SELECT + " WHERE s.user_id = $1 AND ($2::bigint IS NULL OR s.id < $2)"
        " AND ($3::bigint IS NULL OR s.problem_id = $3) ORDER BY s.id DESC LIMIT $4",
        user_id,
        before_id,
        problem_id,
        limit,
    )
    return [Submission(**r) for r in rows]
