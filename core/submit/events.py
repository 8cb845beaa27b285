"""A submission's events as its owner follows them from anywhere: read from the store, so that any replica of the
API serves them and a follower that reconnects resumes where it stopped.

Each kept event is a logged move of the submission's job (`job_transitions`), and its id is the move's id: ids
rise, and "the events after id N" is a query, never a replica's memory. The first event, `submitted` (id 0), is
the submission as it was accepted. While the job waits, `queue` events say its place as it changes; they carry no
id, since a place is worth knowing only now. The last event is `result`, with the stored result.

While the job runs, `case` events say each test case as its runner finishes it. The runner reports them to the
dispatcher that holds the job; that dispatcher's hook (`case_publisher`) tells them on the store's notification
channel, and every replica's `EventFeed` hears them there, so a stream on any replica gets them. They are live only,
like `queue` events: kept nowhere and without an id (the stored result holds every case), so a stream resumed
with Last-Event-ID gets the cases from then on.

Kept as one module: one stream: its stored moves, its live case and queue events, and the resume rule over their
ids, whose ordering only holds when read together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
from pydantic import ValidationError

from contract.names import CASE_PHASES, CasePhase, JobState, SubmissionEventType
from contract.wire import CaseTiming, JobEvent, SubmissionResult
from core.results import load_result
from core.store import jobs, submission_feed
from core.store.outage import STORE_ERRORS
from core.store.submission_feed import CASE_CHANNEL, MAX_NOTIFY_BYTES, JobMove
from core.submit.intake import get_submission

log = logging.getLogger(__name__)

# What a move of the job to each state is called as an event; every final state ends the stream with `result`.
_MOVE_TYPES: dict[JobState, SubmissionEventType] = {
    "dispatched": "dispatched",
    "running": "running",
    "queued": "requeued",
}
SUBMITTED_ID = 0
MAX_CASE_MESSAGE = 500
"""A test's verdict message is cut to this many characters in a `case` event (the stored result has it whole)."""
CASE_QUEUE = 256
"""`case` events one stream holds before it drops the newest: a stream that reads nothing falls behind no further."""


@dataclass(frozen=True)
class CaseProgress:
    """One test case that a runner finished: verified (`test`), timed (`benchmark`), or a profile's step."""

    phase: CasePhase
    index: int
    count: int
    name: str
    passed: bool | None = None
    message: str | None = None
    timing: CaseTiming | None = None
    at: datetime | None = None
    """When the dispatcher heard it from the runner."""


def case_progress_of(event: JobEvent, at: datetime | None = None) -> CaseProgress | None:
    """The case a runner's event reports, or None for an event that reports none (accepted, compiling, done)."""
    if event.index is None or not event.count:
        return None
    if event.type == "test_case" and event.test is not None:
        message = event.test.message[:MAX_CASE_MESSAGE] or None
        return CaseProgress("test", event.index, event.count, event.test.name, event.test.passed, message, at=at)
    if event.type == "benchmark_case" and event.phase == "profile":
        return CaseProgress("profile", event.index, event.count, "", message=event.message[:MAX_CASE_MESSAGE], at=at)
    if event.type == "benchmark_case" and event.timing is not None:
        return CaseProgress("benchmark", event.index, event.count, event.timing.name, timing=event.timing, at=at)
    return None


def encode_case(submission_id: int, case: CaseProgress) -> str | None:
    """The notification's payload, or None when it would not fit one (a case name of kilobytes)."""
    fields: dict[str, Any] = {k: v for k, v in asdict(case).items() if k not in ("timing", "at")}
    fields["timing"] = None if case.timing is None else case.timing.model_dump(mode="json")
    fields["at"] = None if case.at is None else case.at.isoformat()
    payload = json.dumps({"s": submission_id, "case": fields}, separators=(",", ":"))
    return payload if len(payload.encode()) < MAX_NOTIFY_BYTES else None


def decode_case(fields: dict[str, Any]) -> CaseProgress:
    """The case of a payload that `encode_case` wrote; ValueError, KeyError or TypeError for anything else."""
    timing = fields.get("timing")
    at = fields.get("at")
    phase = fields["phase"]
    if phase not in CASE_PHASES:
        raise ValueError(f"unknown case phase {phase!r}")
    return CaseProgress(
        phase=phase,
        index=int(fields["index"]),
        count=int(fields["count"]),
        name=str(fields["name"]),
        passed=fields.get("passed"),
        message=fields.get("message"),
        timing=None if timing is None else CaseTiming.model_validate(timing),
        at=None if at is None else datetime.fromisoformat(at),
    )


class CasePublisher:
    """A Dispatcher's `on_event` hook that tells every replica's event streams of each finished case.

    Cases go out in batches: one statement carries every case told within `batch_s`, each still a notification of
    its own. A notification needs its transaction to commit to disk, and a job tells a case per test and per
    timing: one transaction a case made the dispatcher's store traffic grow with the cases, not the jobs. A job's
    `done` sends what waits before the dispatcher stores its result, so that a stream, which ends at the result,
    hears every case before it."""

    def __init__(self, pool: asyncpg.Pool, batch_s: float = 0.05) -> None:
        self._pool = pool
        self._batch_s = batch_s
        self._waiting: list[str] = []
        self._sender: asyncio.Task[None] | None = None
        # One batch at a time, so that cases go out in the order they were told.
        self._sending = asyncio.Lock()

    async def __call__(self, submission_id: int, event: JobEvent) -> None:
        case = case_progress_of(event, datetime.now(UTC))
        if case is not None:
            payload = encode_case(submission_id, case)
            if payload is None:
                log.info("submission %d: case %d is too large to tell live; it is in the result", submission_id,
                         case.index)  # fmt: skip
            else:
                self._waiting.append(payload)
                if self._sender is None or self._sender.done():
                    self._sender = asyncio.create_task(self._send_later(), name="case-batch")
        if event.type == "done":
            await self.flush()

    async def _send_later(self) -> None:
        await asyncio.sleep(self._batch_s)
        await self.flush()

    async def flush(self) -> None:
        """Send every case told so far."""
        async with self._sending:
            batch, self._waiting = self._waiting, []
            if not batch:
                return
            try:
                await submission_feed.notify_cases(self._pool, batch)
            except STORE_ERRORS as exc:
                # Live progress only: the jobs go on, and their results hold every case.
                log.warning("could not tell %d cases live (%s)", len(batch), exc)

    async def close(self, wait_s: float = 1.0) -> None:
        """Send what waits, and stop. The batch on its way gets `wait_s` to go out: cancelled, it would be lost, and
        a store that does not answer must not hold up a shutdown for long (the cases are live progress only: every
        result holds its own)."""
        sender = self._sender
        if sender is not None and not sender.done():
            try:
                await asyncio.wait_for(asyncio.shield(sender), wait_s)
            except TimeoutError:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sender
        await self.flush()


def case_publisher(pool: asyncpg.Pool) -> CasePublisher:
    """The hook `arena api`'s and `arena bot`'s dispatchers tell each runner event to (see CasePublisher)."""
    return CasePublisher(pool)


class Watch:
    """What one stream hears of its submission in this process: its cases, and a wake-up when a move of its job
    is logged (`moved`)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[CaseProgress] = asyncio.Queue(maxsize=CASE_QUEUE)
        self.moved = asyncio.Event()

    async def wait(self, timeout: float) -> list[CaseProgress]:
        """Wait up to `timeout` seconds for a case or a move; the cases heard ([] for a move alone, or nothing).
        `moved` stays set until the caller reads the moves (it clears it first)."""
        if self.queue.empty() and not self.moved.is_set():
            case = asyncio.ensure_future(self.queue.get())
            moved = asyncio.ensure_future(self.moved.wait())
            try:
                await asyncio.wait({case, moved}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                moved.cancel()
                if not case.done():
                    case.cancel()
            # A get that finished as the wait ended holds a case all the same.
            cases = [case.result()] if case.done() and not case.cancelled() else []
        else:
            cases = []
        while not self.queue.empty():
            cases.append(self.queue.get_nowait())
        return cases


def _closed(conn: asyncpg.Connection) -> bool:
    """Whether the listening connection is gone: closed, or taken back by its pool while the store was away (the
    pool's proxy then refuses every call, `is_closed` included)."""
    try:
        return conn.is_closed()
    except asyncpg.InterfaceError:
        return True


class EventFeed:
    """One process's ear on the store for every stream it serves, so that a quiet stream costs no query:

    - the moves: one query every `poll_s` for every move logged since the last one (`moved_since`), which wakes
      the streams of those submissions; each then reads its own moves (`moves_after`), so what it says is exact.
      A move whose id was passed over while its transaction was still open (ids are taken before commit) is asked
      for again for GAP_TTL_S seconds. Each stream also reads its moves every `FollowPace.fallback_s` on its own;
    - the cases: a single connection that listens on CASE_CHANNEL, held from the first watch until `close`; each
      notification goes to the watches of its submission, and the others are ignored.

    A connection that dies is made again at the next watch, or the next time a stream asks (`ensure`): cases told
    meanwhile are missed, which costs only their live display."""

    GAP_TTL_S = 10.0
    MAX_GAPS = 1000
    BACKLOG = 200
    """Moves before the latest that the first poll reads again (a stream woken for nothing reads nothing)."""

    def __init__(
        self, pool: asyncpg.Pool, poll_s: float = 0.25, on_reach: Callable[[bool], None] | None = None
    ) -> None:
        self._pool = pool
        self.poll_s = poll_s
        # Told False when the polls stop reaching the store, and True when they reach it again (a CLI says so).
        self._on_reach = on_reach
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()
        self._watches: dict[int, set[Watch]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._cursor: int | None = None
        self._gaps: dict[int, float] = {}
        self.heard = 0
        """Case notifications heard (all submissions'), for the bench and the tests."""

    @property
    def listening(self) -> bool:
        return self._conn is not None and not _closed(self._conn)

    @property
    def watching(self) -> int:
        """How many streams this process serves now."""
        return sum(len(watches) for watches in self._watches.values())

    async def ensure(self) -> bool:
        """Listen and poll, if this process does not already; False (logged) while the store cannot be reached."""
        if self._poller is None or self._poller.done():
            try:
                # Set before the stream's first read of its own moves, so that a move logged after that read wakes
                # it; a little before the latest, for moves whose transactions were still open.
                latest = await submission_feed.latest_move_id(self._pool)
            except STORE_ERRORS as exc:
                log.warning("submission events: cannot read the latest move (%s); trying again at the next poll", exc)
                return False
            self._cursor, self._gaps = max(0, latest - self.BACKLOG), {}
            self._poller = asyncio.create_task(self._poll_moves(), name="event-feed-moves")
        if self.listening:
            return True
        async with self._lock:
            if self.listening:
                return True
            await self._drop()
            try:
                conn = await self._pool.acquire(timeout=5.0)
            except (*STORE_ERRORS, TimeoutError) as exc:
                log.warning("case events: cannot listen (%s); trying again at the next poll", exc)
                return False
            try:
                await conn.add_listener(CASE_CHANNEL, self._notified)
            except STORE_ERRORS as exc:
                log.warning("case events: cannot listen (%s); trying again at the next poll", exc)
                await self._release(conn)
                return False
            self._conn = conn
            return True

    @contextlib.asynccontextmanager
    async def watch(self, submission_id: int) -> AsyncIterator[Watch]:
        """Hear the moves and cases of `submission_id` from now until the block ends."""
        watch = Watch()
        self._watches.setdefault(submission_id, set()).add(watch)
        try:
            await self.ensure()
            yield watch
        finally:
            watchers = self._watches.get(submission_id)
            if watchers is not None:
                watchers.discard(watch)
                if not watchers:
                    del self._watches[submission_id]

    async def _poll_moves(self) -> None:
        """Wake the streams whose submissions moved, every `poll_s`, while any stream watches."""
        loop = asyncio.get_running_loop()
        failed = 0
        while self._watches:
            await asyncio.sleep(self.poll_s)
            try:
                await self._read_moves(loop.time())
            except STORE_ERRORS as exc:
                # The streams read their moves on their own meanwhile (fallback_s); the next poll tries again. Said
                # once an outage, not at every poll: a client that follows its run must not fill its screen.
                if not failed:
                    log.warning("submission events: cannot read the latest moves (%s); trying again quietly", exc)
                    if self._on_reach is not None:
                        self._on_reach(False)
                failed += 1
                continue
            if failed:
                log.info("submission events: reading the moves again after %d failed polls", failed)
                failed = 0
                if self._on_reach is not None:
                    self._on_reach(True)

    async def _read_moves(self, now: float) -> None:
        assert self._cursor is not None, "set when the poller starts"
        moved = await submission_feed.moved_since(self._pool, self._cursor, list(self._gaps))
        seen = {move_id for move_id, _ in moved}
        for move_id, submission_id in moved:
            self._gaps.pop(move_id, None)
            for watch in self._watches.get(submission_id, ()):
                watch.moved.set()
        newest = max(seen, default=self._cursor)
        if newest > self._cursor:
            missing = [i for i in range(self._cursor + 1, newest) if i not in seen]
            for move_id in missing[-self.MAX_GAPS :]:
                self._gaps[move_id] = now
            self._cursor = newest
        for move_id, since in list(self._gaps.items()):
            if now - since > self.GAP_TTL_S:
                del self._gaps[move_id]  # rolled back, never to be logged

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        self.heard += 1
        try:
            data = json.loads(payload)
            watchers = self._watches.get(int(data["s"]))
            if not watchers:
                return
            case = decode_case(data["case"])
        except (ValueError, KeyError, TypeError, ValidationError):
            log.warning("case events: a notification that is not a case: %.200s", payload)
            return
        for watch in watchers:
            with contextlib.suppress(asyncio.QueueFull):
                watch.queue.put_nowait(case)

    async def _release(self, conn: asyncpg.Connection) -> None:
        try:
            await self._pool.release(conn, timeout=5.0)
        except (*STORE_ERRORS, TimeoutError):
            with contextlib.suppress(asyncpg.InterfaceError):
                conn.terminate()

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if not _closed(conn):
            with contextlib.suppress(*STORE_ERRORS):
                await conn.remove_listener(CASE_CHANNEL, self._notified)
        await self._release(conn)

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._poller
        async with self._lock:
            await self._drop()


@dataclass(frozen=True)
class SubmissionEvent:
    """One event of a submission. `id` is None for a `queue` event (not kept: resuming skips it)."""

    id: int | None
    type: SubmissionEventType
    submission_id: int
    state: JobState
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
    case: CaseProgress | None = None
    """With `case`: the test case its runner just finished."""


@dataclass(frozen=True)
class FollowPace:
    """How often the store is read: new moves every `poll_s` (a stream followed without an EventFeed), or every
    `fallback_s` when an EventFeed wakes the stream as its moves are logged; the queue place every `place_every_s`
    (it reads up to jobs.PLACE_CAP waiting users, so not at every poll), and with an EventFeed at most
    `place_reads_per_s` a second over all the streams it serves: with many streams waiting, each says its place less
    often (500 streams: every 25 s), rather than the store spending itself on places."""

    poll_s: float = 0.5
    place_every_s: float = 5.0
    fallback_s: float = 15.0
    place_reads_per_s: float = 20.0

    def place_interval(self, feed: EventFeed | None) -> float:
        """Seconds between two reads of one stream's place."""
        if feed is None:
            return self.place_every_s
        return max(self.place_every_s, feed.watching / self.place_reads_per_s)


async def follow(
    pool: asyncpg.Pool,
    submission_id: int,
    after_id: int | None = None,
    pace: FollowPace = FollowPace(),
    feed: EventFeed | None = None,
) -> AsyncIterator[SubmissionEvent]:
    """The submission's events after `after_id` (None: all of them, `submitted` first), until its `result`. With
    `feed`, the stream reads the store when the feed says its job moved (and every `pace.fallback_s`) rather than
    every `pace.poll_s`, and says its `case` events too, as they are heard.

    Resuming after the `result` event yields nothing and ends at once."""
    if feed is None:
        async for event in _follow(pool, submission_id, after_id, pace, None):
            yield event
        return
    # Watched before the first read of the moves, so that no move or case after that read is missed.
    async with feed.watch(submission_id) as watch:
        async for event in _follow(pool, submission_id, after_id, pace, watch, feed):
            yield event


def _case_event(submission_id: int, attempt: int, runner: str | None, case: CaseProgress) -> SubmissionEvent:
    return SubmissionEvent(None, "case", submission_id, "running", attempt, case.at, runner=runner, case=case)


async def _follow(
    pool: asyncpg.Pool,
    submission_id: int,
    after_id: int | None,
    pace: FollowPace,
    watch: Watch | None,
    feed: EventFeed | None = None,
) -> AsyncIterator[SubmissionEvent]:
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
    runner: str | None = None
    heard: list[CaseProgress] = []  # cases heard since the last read of the moves, said after the moves before them
    while True:
        if watch is not None:
            watch.moved.clear()  # a move logged from here on wakes the stream again
        moves = await submission_feed.moves_after(pool, submission_id, after)
        for move in moves:
            after = move.id
            event = await _event_of_move(pool, submission_id, move)
            if event.type == "result":
                # The runner told its last cases before the result was stored: they come first.
                for case in heard:
                    yield _case_event(submission_id, attempt, runner, case)
                yield event
                return
            yield event
            job_id, state, attempt = move.job_id, move.to_state, event.attempt
            runner = event.runner if event.type in ("dispatched", "running") else None
        if state in ("dispatched", "running"):
            for case in heard:
                yield _case_event(submission_id, attempt, runner, case)
        heard = []  # a case heard while the job waits again belongs to an attempt that was given up
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
        place_every_s = pace.place_interval(feed)
        if state == "queued" and (place_read_at is None or loop.time() - place_read_at >= place_every_s):
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
        if watch is None or feed is None:
            await asyncio.sleep(pace.poll_s)
        else:
            await feed.ensure()
            # A move or a case wakes the stream at once; the moves are read again before a case is said, so it
            # never comes before the `running` that precedes it. While it waits in the queue, it wakes to read its
            # place too.
            wait_s = min(pace.fallback_s, place_every_s) if state == "queued" else pace.fallback_s
            heard = await watch.wait(wait_s)
            # Once `running` is said, a case heard alone (no move) follows it already: said without reading the
            # moves, so that a run's cases cost its stream no query.
            while heard and state == "running" and not watch.moved.is_set():
                for case in heard:
                    yield _case_event(submission_id, attempt, runner, case)
                heard = await watch.wait(pace.fallback_s)


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
        # A job withdrawn while it waited for its first attempt ends at attempt 0: call it the first.
        attempt = max(1, move.attempt)
        return SubmissionEvent(
            move.id, "result", submission_id, move.to_state, attempt, move.at, runner=sub.runner, result=result
        )
    runner = None
    if move.to_state in ("dispatched", "running"):
        job = await jobs.get_job(pool, move.job_id)
        # The job row names only its latest attempt's runner.
        if job is not None and job.attempts == move.attempt:
            runner = job.runner
    attempt = move.attempt + 1 if move.to_state == "queued" else move.attempt
    kind = _MOVE_TYPES[move.to_state]
    return SubmissionEvent(move.id, kind, submission_id, move.to_state, attempt, move.at, runner=runner)
