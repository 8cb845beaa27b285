"""The submission flow as the bot sees it: route to a GPU type, submit, follow the job, read the outcome.

`ArenaService` wraps the core's `submit` with what a chat front end needs around it: the GPU types that have
runners, the user's place on the board before the run, the job's state and queue position while it waits,
and, once the dispatcher has stored the result, whether the run set a personal best or took a podium place.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import asyncpg

from contract.names import DType, Language, Mode, rank_pool
from contract.wire import SubmissionResult
from core.contests.entry import ContestEntries, contest_entries
from core.errors import UnknownProblemError, UserFacingError
from core.leaderboard import get_rank, rank_on_fullest_board
from core.results import load_result
from core.settings import Settings
from core.store import jobs, submissions
from core.store.leaderboard import BoardRow
from core.submit.batch import SubmitBatcher
from core.submit.intake import SubmitReceipt, SubmitRequest, get_submission
from core.submit.uploads import check_upload

log = logging.getLogger(__name__)

RECORD_POLL_S = 0.1


class NoRunnerError(UserFacingError):
    """No runner serves the GPU type asked for."""


@dataclass(frozen=True)
class SubmitTicket:
    """An accepted submission and what its live message needs to know about it."""

    receipt: SubmitReceipt
    user_external_id: str
    user_name: str
    slug: str
    file_name: str
    language: Language
    dtype: DType
    mode: Mode
    gpu_type: str
    rank_before: BoardRow | None
    start_in_s: float | None = None  # the queue's estimate when it was accepted; None without finished jobs to go by
    # A ranked run: what it counts for as accepted (None: not ranked, or no contest holds its problem).
    contests: ContestEntries | None = None

    @property
    def submission_id(self) -> int:
        return self.receipt.submission_id

    @property
    def data_type(self) -> str:
        """What `dtype` reads as for the problem (`uint32` for a finite-field problem's float32)."""
        return self.receipt.data_type or self.dtype


@dataclass(frozen=True)
class JobProgress:
    state: str
    queue_position: int
    start_in_s: float | None = None  # while queued: when it should start (core.store.jobs.QueueEstimate)


@dataclass(frozen=True)
class Outcome:
    """A finished submission: its stored row, the result to show, and its effect on the board."""

    submission: submissions.Submission
    result: SubmissionResult
    rank_before: BoardRow | None
    rank_after: BoardRow | None
    recorded: bool
    # A ranked run: what it counts for once judged (None: not ranked, or no contest holds its problem).
    contests: ContestEntries | None = None

    @property
    def holds_entry(self) -> bool:
        """This submission is the user's entry on the board now."""
        return self.rank_after is not None and self.rank_after.submission_id == self.submission.id

    @property
    def personal_best(self) -> bool:
        """The run replaced the user's entry (or made their first): the board keeps only each user's best."""
        if not self.holds_entry:
            return False
        return self.rank_before is None or self.rank_before.submission_id != self.submission.id

    @property
    def podium(self) -> bool:
        return self.holds_entry and self.rank_after is not None and self.rank_after.rank <= 3


# How long a GPU type's pace (its jobs in flight, the median of its latest jobs) serves new submissions' estimates.
PACE_TTL_S = 2.0


def _stale(read_at: float, pace: asyncio.Future[jobs.QueueEstimate]) -> bool:
    """A pace to read again: older than PACE_TTL_S, or its read failed; never one still on its way."""
    if not pace.done():
        return False
    return pace.cancelled() or pace.exception() is not None or time.monotonic() - read_at >= PACE_TTL_S


class ArenaService:
    """Submissions for a chat front end. `gpu_types` lists the GPU types that have runners right now."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        settings: Settings,
        gpu_types: Callable[[], Sequence[str]],
        default_gpu: str | None = None,
    ) -> None:
        self.pool = pool
        self.settings = settings
        self._gpu_types = gpu_types
        self._default_gpu = default_gpu
        # Per GPU type: when its pace was last read, and that read (done, or on its way).
        self._paces: dict[str, tuple[float, asyncio.Future[jobs.QueueEstimate]]] = {}
        self.submitter = SubmitBatcher(pool, settings.rate)

    def gpu_types(self) -> list[str]:
        return sorted(self._gpu_types())

    async def aclose(self) -> None:
        """Finish storing the submissions taken (before the pool closes)."""
        await self.submitter.close()

    def default_gpu(self) -> str | None:
        """The GPU type used when a command names none: the configured default, else the only one there is."""
        types = self.gpu_types()
        if self._default_gpu is not None:
            return self._default_gpu
        return types[0] if len(types) == 1 else None

    def resolve_gpu(self, requested: str | None) -> str:
        """The GPU type to run on, or NoRunnerError saying which ones exist."""
        types = self.gpu_types()
        choice = requested.strip().lower() if requested else self.default_gpu()
        if choice is not None and choice in types:
            return choice
        offered = ", ".join(f"`{t}`" for t in types) or "none"
        if choice is None:
            raise NoRunnerError(f"Choose a GPU with the `gpu` option: one of {offered}.")
        raise NoRunnerError(
            f"No runner serves `{choice}` right now; choose one of {offered}, or ask a moderator to add a runner."
        )

    async def submit(
        self,
        *,
        user_external_id: str,
        user_name: str,
        slug: str,
        file_name: str,
        data: bytes,
        dtype: DType,
        mode: Mode,
        gpu: str | None,
        client_token: str | None,
        profile_case: int | None = None,
        world_size: int = 1,
    ) -> SubmitTicket:
        """Store the submission and its queued job (core `submit`), then read the user's current place.

        `profile_case` is for mode `profile`: the test case to profile (None: the largest). `world_size` is a
        distributed problem's ranks: the job then waits for the pool's slots of that many ranks (its rank pool,
        `cpux2`), whose board it lands on."""
        gpu_type = rank_pool(self.resolve_gpu(gpu), world_size)
        upload = check_upload(file_name, data)
        request = SubmitRequest(
            user_external_id,
            user_name,
            slug.strip(),
            upload,
            gpu_type,
            dtype,
            mode,
            client_token,
            profile_case,
            world_size,
        )
        receipt = await self.submitter.submit(request)
        ranked = mode == "ranked"
        before = await self._rank_before(receipt, gpu_type, dtype) if ranked else None
        # The receipt's place is in the fair order already; only the pace of the GPU type is left to read.
        place = receipt.queue_position
        estimate = await self._estimate_at(gpu_type, place) if place else None
        return SubmitTicket(
            receipt,
            user_external_id,
            user_name,
            request.problem_slug,
            upload.file_name,
            upload.language,
            dtype,
            mode,
            gpu_type,
            before,
            estimate.start_in_s if estimate is not None else None,
            # Read only where some contest holds the problem: most ranked runs are not in any.
            await self._contests(receipt.submission_id) if ranked and receipt.in_contest else None,
        )

    async def _contests(self, submission_id: int) -> ContestEntries | None:
        sub = await get_submission(self.pool, submission_id)
        return await contest_entries(self.pool, sub, datetime.now(UTC))

    async def _rank_before(self, receipt: SubmitReceipt, gpu_type: str, dtype: str) -> BoardRow | None:
        """The user's place before the run, on the fullest board of the version the submission was stored at (the
        runner chooses the timing method, so a new submission's is known only after)."""
        return await rank_on_fullest_board(
            self.pool, receipt.problem_id, receipt.problem_version, gpu_type, dtype, receipt.user_id
        )

    async def _rank(
        self, slug: str, gpu_type: str, dtype: str, external_id: str, method: str | None = None
    ) -> BoardRow | None:
        """The user's place; on the board of `method` when the run's method is known, else on the fullest board
        of the GPU type and dtype (the runner chooses the method, so a new submission's is known only after)."""
        try:
            return await get_rank(self.pool, slug, gpu_type, dtype, external_id, method=method)
        except UnknownProblemError:
            return None

    async def _estimate_at(self, gpu_type: str, position: int) -> jobs.QueueEstimate:
        """A new submission's start estimate from its place and its GPU type's pace, which is read at most every
        PACE_TTL_S, and by one caller at a time: it costs about a millisecond at 10 million jobs (more with a long
        queue), a burst of submissions would read it for each, and it moves by a job at a time. Callers that find
        it stale while a read is on its way wait for that read (32 callers at once read it 195 times in 10,000
        submissions, 8 % of the machine's CPU, before they did)."""
        known = self._paces.get(gpu_type)
        if known is None or _stale(*known):
            known = (time.monotonic(), asyncio.ensure_future(jobs.estimate_at(self.pool, gpu_type, 0)))
            self._paces[gpu_type] = known
        # Shielded: a caller cancelled while it waits must not cancel the read the others wait for.
        return replace(await asyncio.shield(known[1]), position=position)

    async def job_progress(self, job_id: int) -> JobProgress:
        job = await jobs.get_job(self.pool, job_id)
        if job is None:
            return JobProgress("unknown", 0)
        if job.state != "queued":
            return JobProgress(job.state, 0)
        estimate = await jobs.start_estimate(self.pool, job_id)
        return JobProgress(job.state, estimate.position, estimate.start_in_s)

    async def wait_recorded(self, job_id: int, timeout_s: float) -> bool:
        """Wait until the job is in a final state (the dispatcher stores the result right after `done`)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            job = await jobs.get_job(self.pool, job_id)
            if job is not None and job.state in jobs.FINAL_STATES:
                return True
            await asyncio.sleep(RECORD_POLL_S)
        return False

    async def outcome(self, ticket: SubmitTicket, result: SubmissionResult | None, timeout_s: float) -> Outcome:
        """The finished submission. `result` is the runner's (from the `done` event) when there was one; the
        store's verdict wins when they disagree, and the store rebuilds the result when there was none."""
        recorded = await self.wait_recorded(ticket.receipt.job_id, timeout_s)
        sub = await get_submission(self.pool, ticket.submission_id)
        if result is None or (recorded and sub.status != result.status):
            result = await load_result(self.pool, sub)
        after = None
        if ticket.mode == "ranked" and recorded:
            after = await self._rank(ticket.slug, ticket.gpu_type, ticket.dtype, ticket.user_external_id, sub.method)
        if not recorded:
            log.warning("submission %d: job %d not recorded in %.0f s", sub.id, ticket.receipt.job_id, timeout_s)
        entries = await contest_entries(self.pool, sub, datetime.now(UTC)) if ticket.mode == "ranked" else None
        return Outcome(sub, result, ticket.rank_before, after, recorded, entries)
