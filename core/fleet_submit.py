"""`arena submit --fleet POOL`: store the submission and let the fleet's dispatchers run it on a runner of the
pool, following it in the store to its result. The CLI holds no runner and signs nothing: it needs the store only,
and waits out a store that is briefly away, as the dispatchers do.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

from core.errors import UserFacingError
from core.local_submit import LocalRun, LocalSubmission, contests_of, say_receipt
from core.problems import sync_problem
from core.progress import describe_place
from core.results import load_result
from core.settings import Settings
from core.store import fleet as fleet_store
from core.store import jobs, submissions
from core.store.outage import STORE_OUTAGE_ERRORS
from core.submissions import submit
from contract.wire import SubmissionResult

log = logging.getLogger(__name__)

POLL_S = 0.5
ESTIMATE_EVERY_S = 5.0
# While the store is out of reach, it is tried again after this, doubling up to the bound.
OUTAGE_RETRY_S = (0.5, 5.0)
Progress = Callable[[str], None]
T = TypeVar("T")


async def _through_outage(read: Callable[[], Awaitable[T]], say: Progress) -> T:
    """`read()`, tried again while the store is out of reach, as the dispatcher waits for it: the job runs on
    meanwhile, and its result is stored once the store is back. Says when the wait starts and ends."""
    delay, since = OUTAGE_RETRY_S[0], None
    while True:
        try:
            value = await read()
        except STORE_OUTAGE_ERRORS as exc:
            if since is None:
                since = time.monotonic()
                log.warning("the store is out of reach while following a fleet job: %r", exc)
                say("the store is out of reach; waiting for it (the job runs on, and nothing is lost)")
            await asyncio.sleep(delay)
            delay = min(2 * delay, OUTAGE_RETRY_S[1])
            continue
        if since is not None:
            say(f"the store is back after {time.monotonic() - since:.0f} s")
        return value


async def submit_to_fleet(
    pool: asyncpg.Pool,
    settings: Settings,
    local: LocalSubmission,
    gpu_type: str,
    say: Progress,
    progress: LocalRun | None = None,
) -> tuple[int, SubmissionResult]:
    """Queue the submission for the pool `gpu_type` and wait for its result; the submission id and the result.
    Says the queue place and start estimate as they change, and the runner once one takes the job. Cancelling
    the caller withdraws the submission."""
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
    said = ""
    estimated_at = -ESTIMATE_EVERY_S
    loop = asyncio.get_running_loop()
    try:
        while True:
            job = await _through_outage(lambda: jobs.get_job(pool, receipt.job_id), say)
            assert job is not None
            if job.state in jobs.FINAL_STATES:
                break
            if job.state == "queued":
                # The place reads up to jobs.PLACE_CAP waiting users per part: not at every poll.
                if loop.time() - estimated_at < ESTIMATE_EVERY_S and said.startswith("queued"):
                    await asyncio.sleep(POLL_S)
                    continue
                estimated_at = loop.time()
                estimate = await _through_outage(lambda: jobs.start_estimate(pool, receipt.job_id), say)
                start = f", starts in ~{estimate.start_in_s:.0f} s" if estimate.start_in_s is not None else ""
                line = f"queued for pool {gpu_type} at place {describe_place(estimate.position)}{start}"
            else:
                line = f"{job.state} on runner {job.runner} (attempt {job.attempts})"
            if line != said:
                say(line)
                said = line
            await asyncio.sleep(POLL_S)
    except asyncio.CancelledError:
        await progress.withdraw(pool, receipt.submission_id, receipt.job_id)
        raise
    sub = await _through_outage(lambda: submissions.get_submission(pool, receipt.submission_id), say)
    assert sub is not None
    if local.mode == "ranked":
        progress.contests = await _through_outage(lambda: contests_of(pool, receipt.submission_id), say)
    return receipt.submission_id, await _through_outage(lambda: load_result(pool, sub), say)
