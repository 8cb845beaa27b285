"""A submission's events as its owner follows them from anywhere: read from the store, so that any replica of the
API serves them and a follower that reconnects resumes where it stopped.

Each kept event is a logged move of the submission's job (`job_transitions`), and its id is the move's id: ids
rise, and "the events after id N" is a query, never a replica's memory. The first event, `submitted` (id 0), is
the submission as it was accepted. While the job waits, `queue` events say its place as it changes; they carry no
id, since a place is worth knowing only now. The last event is `result`, with the stored result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from core.results import load_result
from core.store import jobs, submission_feed
from core.store.submission_feed import JobMove
from core.submissions import get_submission
from runner.api import SubmissionResult

# What a move of the job to each state is called as an event; every final state ends the stream with `result`.
_MOVE_TYPES = {"dispatched": "dispatched", "running": "running", "queued": "requeued"}
EVENT_TYPES = ("submitted", "queue", "dispatched", "running", "requeued", "result")
SUBMITTED_ID = 0


@dataclass(frozen=True)
class SubmissionEvent:
    """One event of a submission. `id` is None for a `queue` event (not kept: resuming skips it)."""

    id: int | None
    type: str
    submission_id: int
    state: str
    """The job's state after the event: queued, dispatched, running, done, failed or error."""
    attempt: int
    at: datetime | None = None
    position: int | None = None
    """Its place in the queue of its GPU type (1: next), while it waits."""
    start_in_s: float | None = None
    runner: str | None = None
    """The runner that took this attempt, where the store still names it."""
    result: SubmissionResult | None = None
    """With `result`: the stored result, as GET /v1/submissions/{id} shows it."""


@dataclass(frozen=True)
class FollowPace:
    """How often the store is read: new moves every `poll_s`, the queue place every `place_every_s` (it reads up to
    jobs.PLACE_CAP waiting users, so not at every poll)."""

    poll_s: float = 0.5
    place_every_s: float = 5.0


async def follow(
    pool: asyncpg.Pool, submission_id: int, after_id: int | None = None, pace: FollowPace = FollowPace()
) -> AsyncIterator[SubmissionEvent]:
    """The submission's events after `after_id` (None: all of them, `submitted` first), until its `result`.

    Resuming after the `result` event yields nothing and ends at once."""
    after = SUBMITTED_ID if after_id is None else after_id
    said_place: int | None = None
    if after_id is None:
        submitted = await _submitted(pool, submission_id)
        said_place = submitted.position
        yield submitted
    place_read_at: float | None = None
    loop = asyncio.get_running_loop()
    # The job's state as the moves tell it, so that a poll costs one query while nothing happens; read from the job
    # row only until a move has been seen (a resumed stream, or one whose job has not moved yet).
    job_id: int | None = None
    state: str | None = None
    attempt = 1  # while queued: the attempt it waits for
    while True:
        moves = await submission_feed.moves_after(pool, submission_id, after)
        for move in moves:
            after = move.id
            event = await _event_of_move(pool, submission_id, move)
            yield event
            if event.type == "result":
                return
            job_id, state, attempt = move.job_id, move.to_state, event.attempt
        if state is None or (state in jobs.FINAL_STATES and not moves):
            job = await _latest_job(pool, submission_id)
            if job is None:
                return
            job_id, state, attempt = job.id, job.state, job.attempts + (1 if job.state == "queued" else 0)
            if state in jobs.FINAL_STATES:
                # The job's state and its final move are written in one transaction: a job read as ended whose
                # move this poll missed ended in between, and the move is there now. None: resumed after the end.
                if not await submission_feed.moves_after(pool, submission_id, after, limit=1):
                    return
                continue
        if state == "queued" and (place_read_at is None or loop.time() - place_read_at >= pace.place_every_s):
            assert job_id is not None
            place_read_at = loop.time()
            estimate = await jobs.start_estimate(pool, job_id)
            if estimate.position and estimate.position != said_place:
                said_place = estimate.position
                yield SubmissionEvent(
                    id=None,
                    type="queue",
                    submission_id=submission_id,
                    state="queued",
                    attempt=attempt,
                    position=estimate.position,
                    start_in_s=estimate.start_in_s,
                )
        elif state != "queued":
            said_place, place_read_at = None, None
        await asyncio.sleep(pace.poll_s)


async def _latest_job(pool: asyncpg.Pool, submission_id: int) -> jobs.Job | None:
    found = await jobs.jobs_of(pool, submission_id)
    return found[-1] if found else None


async def _submitted(pool: asyncpg.Pool, submission_id: int) -> SubmissionEvent:
    sub = await get_submission(pool, submission_id)
    job = await _latest_job(pool, submission_id)
    position, start_in_s = None, None
    if job is not None and job.state == "queued":
        estimate = await jobs.start_estimate(pool, job.id)
        position, start_in_s = estimate.position or None, estimate.start_in_s
    return SubmissionEvent(SUBMITTED_ID, "submitted", submission_id, "queued", 1, sub.created_at, position, start_in_s)


async def _event_of_move(pool: asyncpg.Pool, submission_id: int, move: JobMove) -> SubmissionEvent:
    if move.to_state in jobs.FINAL_STATES:
        sub = await get_submission(pool, submission_id)
        # The move and the result are stored in one transaction (core.results), so the result is there.
        result = await load_result(pool, sub)
        return SubmissionEvent(
            move.id, "result", submission_id, move.to_state, move.attempt, move.at, runner=sub.runner, result=result
        )
    runner = None
    if move.to_state in ("dispatched", "running"):
        job = await jobs.get_job(pool, move.job_id)
        # The job row names only its latest attempt's runner.
        if job is not None and job.attempts == move.attempt:
            runner = job.runner
    attempt = move.attempt + 1 if move.to_state == "queued" else move.attempt
    kind = _MOVE_TYPES.get(move.to_state, move.to_state)
    return SubmissionEvent(move.id, kind, submission_id, move.to_state, attempt, move.at, runner=runner)
