"""`arena submit --fleet POOL`: store the submission and let the fleet's dispatchers run it on a runner of the
pool, following its events to its result. The CLI holds no runner and signs nothing: it needs the store only.

It follows the submission as the API's event stream does (`core.submit.events.follow` over an `EventFeed`): the
store tells it each move of the job and each case its runner finishes, and nothing polls the job. A store that is
briefly away is waited out, as the dispatchers wait for it, and the stream resumes after the last event it said.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import asyncpg

from contract.wire import SubmissionResult
from core.errors import UserFacingError
from core.problems import sync_problem
from core.results import load_result
from core.settings import Settings
from core.store import fleet as fleet_store
from core.store import submissions
from core.store.outage import STORE_OUTAGE_ERRORS
from core.submit.events import EventFeed, SubmissionEvent, follow
from core.submit.intake import get_submission, submit
from core.submit.local import LocalRun, LocalSubmission, contests_of, say_receipt

log = logging.getLogger(__name__)

# While the store is out of reach, it is tried again after this, doubling up to the bound.
OUTAGE_RETRY_S = (0.5, 5.0)
Progress = Callable[[str], None]
EventSink = Callable[[SubmissionEvent], None]


class OutageNotice:
    """Says once when the store goes out of reach and once when it is back, whoever notices first: the event feed's
    polls or a read of the stream. The job runs on meanwhile, and its result is stored once the store is back."""

    def __init__(self, say: Progress) -> None:
        self._say = say
        self._since: float | None = None

    def reach(self, reachable: bool) -> None:
        if not reachable and self._since is None:
            self._since = time.monotonic()
            self._say("the store is out of reach; waiting for it (the job runs on, and nothing is lost)")
        elif reachable and self._since is not None:
            self._say(f"the store is back after {time.monotonic() - self._since:.0f} s")
            self._since = None

    async def wait_for_store(self, pool: asyncpg.Pool, submission_id: int) -> None:
        """Wait until the store answers again, as the dispatcher waits for it."""
        self.reach(False)
        delay = OUTAGE_RETRY_S[0]
        while True:
            await asyncio.sleep(delay)
            try:
                await submissions.get_submission(pool, submission_id)
            except STORE_OUTAGE_ERRORS:
                delay = min(2 * delay, OUTAGE_RETRY_S[1])
                continue
            self.reach(True)
            return


async def follow_to_result(
    pool: asyncpg.Pool, submission_id: int, on_event: EventSink, say: Progress
) -> SubmissionResult:
    """Tell `on_event` each event of the submission, as the store pushes them, up to its `result`; the stored
    result. Each event is told once: after an outage the stream resumes after the last kept event."""
    notice = OutageNotice(say)
    feed = EventFeed(pool, on_reach=notice.reach)
    after: int | None = None
    try:
        while True:
            try:
                async for event in follow(pool, submission_id, after, feed=feed):
                    if event.id is not None:
                        after = event.id
                    on_event(event)
                    if event.type == "result" and event.result is not None:
                        notice.reach(True)
                        return event.result
                # Resumed after its end (the result was said before the outage): the store has the result.
                return await load_result(pool, await get_submission(pool, submission_id))
            except STORE_OUTAGE_ERRORS as exc:
                log.warning("the store is out of reach while following submission %d: %r", submission_id, exc)
                await notice.wait_for_store(pool, submission_id)
    finally:
        await feed.close()


async def submit_to_fleet(
    pool: asyncpg.Pool,
    settings: Settings,
    local: LocalSubmission,
    gpu_type: str,
    say: Progress,
    on_event: EventSink,
    progress: LocalRun | None = None,
) -> tuple[int, SubmissionResult]:
    """Queue the submission for the pool `gpu_type` and follow it to its result; the submission id and the result.
    Each event goes to `on_event` (the front end renders it); `say` gets what this flow itself has to say (a
    ranked run's contests, a store outage). Cancelling the caller withdraws the submission."""
    if gpu_type not in await fleet_store.pool_types(pool):
        pools = ", ".join(await fleet_store.pool_types(pool)) or "none yet"
        raise UserFacingError(
            f"No pool `{gpu_type}` exists in this store (pools: {pools}). Make one with `arena fleet token create "
            f"--pool {gpu_type}` and start its runners, or run locally without --fleet."
        )
    progress = progress if progress is not None else LocalRun()
    await sync_problem(pool, local.problem)
    receipt = await submit(pool, local.submit_request(gpu_type, settings.local_user), settings.rate)
    progress.submission_id = receipt.submission_id
    if local.mode == "ranked":
        await say_receipt(pool, receipt.submission_id, say)
    try:
        result = await follow_to_result(pool, receipt.submission_id, on_event, say)
    except asyncio.CancelledError:
        await progress.withdraw(pool, receipt.submission_id, receipt.job_id)
        raise
    if local.mode == "ranked":
        progress.contests = await contests_of(pool, receipt.submission_id)
    return receipt.submission_id, result
