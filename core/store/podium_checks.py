"""Podium checks: each podium run of a contest, run a second time before the board freezes (V025)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.store.pool import Conn

# A fleet runner counts as another runner of the pool while heard from within this (the fleet's default
# heartbeat timeout is shorter; a runner between two heartbeats still counts).
LIVE_WITHIN_S = 120.0


@dataclass(frozen=True)
class PodiumCheck:
    contest_id: int
    submission_id: int
    first_job_id: int | None
    first_runner: str | None
    first_score: float
    check_job_id: int
    check_runner: str | None
    check_score: float | None
    verdict: str
    created_at: datetime
    checked_at: datetime | None

    @property
    def same_runner(self) -> bool:
        """Both runs came from one runner (a pool of one, or none other free in time)."""
        return self.check_runner is not None and self.check_runner == self.first_runner


_COLUMNS = """contest_id, submission_id, first_job_id, first_runner, first_score, check_job_id, check_runner,
    check_score, verdict, created_at, checked_at"""


async def insert_check(
    conn: Conn,
    contest_id: int,
    submission_id: int,
    first_job_id: int | None,
    first_runner: str | None,
    first_score: float,
    check_job_id: int,
) -> None:
    await conn.execute(
        """INSERT INTO podium_checks (contest_id, submission_id, first_job_id, first_runner, first_score, check_job_id)
        VALUES ($1, $2, $3, $4, $5, $6)""",
        contest_id,
        submission_id,
        first_job_id,
        first_runner,
        first_score,
        check_job_id,
    )


async def contest_checks(conn: Conn, contest_id: int) -> list[PodiumCheck]:
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM podium_checks WHERE contest_id = $1 ORDER BY created_at, submission_id", contest_id
    )
    return [PodiumCheck(**r) for r in rows]


async def check_of_job(conn: Conn, job_id: int) -> PodiumCheck | None:
    """The check that `job_id` runs, its row locked until the transaction ends."""
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM podium_checks WHERE check_job_id = $1 FOR UPDATE", job_id)
    return PodiumCheck(**row) if row else None


async def set_verdict(conn: Conn, job_id: int, runner: str | None, score: float | None, verdict: str) -> None:
    await conn.execute(
        """UPDATE podium_checks SET check_runner = $2, check_score = $3, verdict = $4, checked_at = now()
        WHERE check_job_id = $1""",
        job_id,
        runner,
        score,
        verdict,
    )


async def other_live_runners(conn: Conn, gpu_type: str, runner: str | None) -> int:
    """How many fleet runners of the pool other than `runner` are live and take ranked jobs (statically configured
    runners are not in the store: a pool of those counts as one)."""
    count: int = await conn.fetchval(
        """SELECT count(*) FROM runners
        WHERE gpu_type = $1 AND state = 'active' AND quarantined_at IS NULL AND url IS NOT NULL
          AND last_seen_at >= now() - make_interval(secs => $3) AND name IS DISTINCT FROM $2""",
        gpu_type,
        runner,
        LIVE_WITHIN_S,
    )
    return count
