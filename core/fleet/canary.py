"""A runner's canary report, judged against its pool and acted on: quarantine, and flags on its ranked results.

The API service calls `record_canary` when a runner reports (at join, then periodically). The verdict comes from
`core.canary.canary_drift` (thresholds and why: docs/canaries.md). A first drift is only noted
(`needs_confirmation`); a second in a row quarantines the runner, so that it gets no ranked job (the claim's
`ranked=False`), and flags every ranked result it timed since its last good canary, for a moderator to re-run
(`arena fleet rerun-flagged`). A later good canary lifts the quarantine; the flags stay until the re-runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import asyncpg

from contract.wire import CanaryReport, RunnerStanding
from core.canary import CanaryVerdict, canary_drift
from core.errors import ModerationError
from core.fleet import FleetAuthError, RunnerGoneError, standing
from core.moderation import Actor, rerun_submission
from core.store import fleet as store

log = logging.getLogger(__name__)

_DRIFTED = CanaryVerdict("drifted", "pool", 0, (), False, "")


async def record_canary(pool: asyncpg.Pool, runner_id: int, report: CanaryReport) -> RunnerStanding:
    async with pool.acquire() as conn, conn.transaction():
        row = await store.get_runner(conn, runner_id, lock=True)
        if row is None:
            raise FleetAuthError(f"No runner {runner_id} has joined.")
        if row.state not in ("active", "draining"):
            raise RunnerGoneError(f"Runner {row.name} is {row.state}; register again first.", row.state)
        peers = [
            CanaryReport.model_validate(r)
            for r in await store.latest_canaries(conn, row.gpu_type, report.set_version, runner_id)
        ]
        last = await store.last_verdicts(conn, runner_id, 1)
        previous = _DRIFTED if last and last[0] in ("needs_confirmation", "drifted") else None
        verdict = canary_drift(report, peers, previous=previous)
        stored = verdict.stored
        await store.insert_canary(
            conn, runner_id, report.set_version, report.model_dump(mode="json"), stored, verdict.message
        )
        if verdict.quarantines:
            await store.quarantine(conn, runner_id, verdict.message)
            flagged = await store.flag_results_since_good_canary(
                conn, runner_id, f"timed on {row.name}: " + verdict.message
            )
            log.warning("runner %s quarantined (%d ranked results flagged): %s", row.name, flagged, verdict.message)
        elif stored == "ok" and row.quarantined:
            await store.release_quarantine(conn, runner_id)
            log.info("runner %s: canaries good again, quarantine lifted", row.name)
        elif stored == "needs_confirmation":
            log.warning("runner %s: canaries drifted once: %s", row.name, verdict.message)
        row = await store.get_runner(conn, runner_id)
    assert row is not None
    return standing(row).model_copy(update={"canary": stored})


@dataclass(frozen=True)
class FlaggedRerun:
    submission_id: int
    job_id: int | None  # None when it could not be re-run now (`problem` says why)
    problem: str | None = None


async def rerun_flagged(pool: asyncpg.Pool, actor: Actor, runner: str | None = None) -> list[FlaggedRerun]:
    """Re-run every flagged ranked result (of `runner`, or of any): each gets a new job, its flag is cleared."""
    done: list[FlaggedRerun] = []
    for submission_id in await store.flagged_submissions(pool, runner):
        try:
            job_id = await rerun_submission(pool, actor, submission_id, "timed on a runner whose canaries drifted")
        except ModerationError as exc:
            done.append(FlaggedRerun(submission_id, None, exc.message))
            continue
        await store.clear_flag(pool, submission_id)
        done.append(FlaggedRerun(submission_id, job_id))
    return done
