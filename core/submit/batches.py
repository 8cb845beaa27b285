"""Batches: up to MAX_VARIANTS variants of one problem, sent together, each its own submission (its own result,
quota charge and place in the fair queue), followed as one stream and answered as one table that ranks them.

A search loop that tries eight tile sizes sends one batch instead of eight submissions and eight streams. Every
variant's upload is checked before any is stored, and the user's bucket for the mode must hold them all, so a batch
is refused whole rather than cut short by its own quota. With an idempotency key, a retry answers the first batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal

import asyncpg

from contract.names import SUBMISSION_STATUSES, DType, Mode, StoredStatus
from core.errors import BadUploadError, InvalidOptionError, RateLimitedError, SubmissionNotFoundError
from core.quota import user_quota
from core.ratelimit import describe_wait
from core.store import batches, submissions, users
from core.store.batches import BatchRow
from core.store.submissions import Submission
from core.submit.events import EventFeed, FollowPace, SubmissionEvent, follow
from core.submit.service import ArenaService, SubmitTicket
from core.submit.uploads import check_upload

log = logging.getLogger(__name__)

MAX_VARIANTS = 16
BatchState = Literal["queued", "running", "done"]


@dataclass(frozen=True)
class Variant:
    file_name: str
    data: bytes


@dataclass(frozen=True)
class BatchTicket:
    batch: BatchRow
    tickets: list[SubmitTicket]


@dataclass(frozen=True)
class RankedVariant:
    """One variant in the batch's table: its place among the variants that passed (None: it did not pass, or its
    mode times nothing), and its submission."""

    position: int
    rank: int | None
    submission: Submission


@dataclass(frozen=True)
class BatchStatus:
    batch: BatchRow
    slug: str
    state: BatchState  # queued (none started), running, or done (every variant has its result)
    counts: dict[StoredStatus, int]  # by the submissions' status
    variants: list[RankedVariant]  # ranked first (best first), then the others in the order they were sent


def check_variants(variants: Sequence[Variant]) -> None:
    """Refuse a batch that cannot be sent as it is, naming the variant: its count, a name twice, an upload."""
    if not 1 <= len(variants) <= MAX_VARIANTS:
        raise InvalidOptionError(f"A batch has 1 to {MAX_VARIANTS} variants (files); this one has {len(variants)}.")
    seen: set[str] = set()
    for index, variant in enumerate(variants, 1):
        if variant.file_name in seen:
            raise InvalidOptionError(
                f"Two variants are called `{variant.file_name}`; name each file differently: the table tells the "
                "variants apart by their names."
            )
        seen.add(variant.file_name)
        try:
            check_upload(variant.file_name, variant.data)
        except BadUploadError as exc:
            raise BadUploadError(f"Variant {index} ({variant.file_name}): {exc.message}") from exc


async def _check_quota(service: ArenaService, external_id: str, mode: Mode, wanted: int) -> None:
    quotas = {q.mode: q for q in await user_quota(service.pool, external_id, service.settings.rate)}
    quota = quotas.get(mode)
    if quota is None or quota.left >= wanted:
        return
    short = wanted - quota.available
    wait = max(1.0, short * 3600.0 / quota.per_hour)
    raise RateLimitedError(
        f"This batch needs {wanted} {mode} submissions and you have {quota.left} left now ({quota.burst} at once, "
        f"{quota.per_hour:g} an hour): send fewer variants, or try again in {describe_wait(wait)}.",
        retry_after_s=wait,
    )


async def submit_batch(
    service: ArenaService,
    *,
    user_external_id: str,
    user_name: str,
    slug: str,
    variants: Sequence[Variant],
    dtype: DType,
    mode: Mode,
    gpu: str | None,
    client_token: str | None,
) -> BatchTicket:
    """Check every variant, then store each as its own submission and the batch that groups them."""
    check_variants(variants)
    service.resolve_gpu(gpu)  # no runner for it: refused before anything is charged
    await _check_quota(service, user_external_id, mode, len(variants))
    tickets = []
    for index, variant in enumerate(variants):
        tickets.append(
            await service.submit(
                user_external_id=user_external_id,
                user_name=user_name,
                slug=slug,
                file_name=variant.file_name,
                data=variant.data,
                dtype=dtype,
                mode=mode,
                gpu=gpu,
                # Each variant's own key: a retry of the batch finds each submission it stored the first time.
                client_token=None if client_token is None else f"{client_token}#{index}",
            )
        )
    first = await submissions.get_submission(service.pool, tickets[0].submission_id)
    assert first is not None
    async with service.pool.acquire() as conn, conn.transaction():
        batch = await batches.insert_batch(
            conn,
            first.user_id,
            first.problem_id,
            mode,
            dtype,
            tickets[0].gpu_type,
            [t.submission_id for t in tickets],
            client_token,
        )
    log.info("batch %d: %d variants of %s (%s) for user %d", batch.id, len(tickets), first.slug, mode, first.user_id)
    return BatchTicket(batch, tickets)


async def owned_batch(pool: asyncpg.Pool, batch_id: int, external_id: str) -> BatchRow:
    """The caller's batch; another's reads as not found, as another's submission does."""
    batch = await batches.get_batch(pool, batch_id)
    owner = await users.find_user(pool, external_id)
    if batch is None or owner is None or batch.user_id != owner.id:
        raise SubmissionNotFoundError(f"You have no batch #{batch_id}; POST /v1/submissions/batches makes one.")
    return batch


def rank_variants(subs: Sequence[Submission]) -> list[RankedVariant]:
    """The variants that passed with a score, best first (ties share a place), then the rest as they were sent."""
    scored = sorted(
        ((i, s) for i, s in enumerate(subs) if s.status == "passed" and s.score is not None),
        key=lambda pair: (-(pair[1].score or 0.0), pair[0]),
    )
    ranked: list[RankedVariant] = []
    for place, (position, sub) in enumerate(scored, 1):
        tied = ranked and ranked[-1].submission.score == sub.score
        ranked.append(RankedVariant(position, ranked[-1].rank if tied else place, sub))
    placed = {variant.position for variant in ranked}
    return ranked + [RankedVariant(i, None, s) for i, s in enumerate(subs) if i not in placed]


async def batch_status(pool: asyncpg.Pool, batch: BatchRow) -> BatchStatus:
    subs = []
    for sub_id in batch.submission_ids:
        sub = await submissions.get_submission(pool, sub_id)
        assert sub is not None, "a batch's member is never deleted"
        subs.append(sub)
    counts: dict[StoredStatus, int] = {}
    for sub in subs:
        counts[sub.status] = counts.get(sub.status, 0) + 1
    state: BatchState
    if all(s.status in SUBMISSION_STATUSES for s in subs):
        state = "done"
    elif all(s.status == "queued" for s in subs):
        state = "queued"
    else:
        state = "running"
    return BatchStatus(batch, subs[0].slug, state, counts, rank_variants(subs))


# -- one stream for the whole batch --------------------------------------------------------------------------------


def parse_cursor(text: str | None, batch: BatchRow) -> dict[int, int]:
    """A batch stream's resume point: `SUB:EVENT` pairs, comma-separated, the last kept event of each variant
    (what the stream's `id` fields carry). Raises InvalidOptionError for anything else."""
    if text is None or not text.strip():
        return {}
    cursor: dict[int, int] = {}
    for pair in text.strip().split(","):
        sub_text, _, event_text = pair.partition(":")
        if not (sub_text.isdigit() and event_text.isdigit() and len(sub_text) <= 18 and len(event_text) <= 18):
            raise InvalidOptionError(
                f"Last-Event-ID is {text[:60]!r}; send back the `id` of the last batch event you received."
            )
        if int(sub_text) not in batch.submission_ids:
            raise InvalidOptionError(f"Last-Event-ID names submission {sub_text}, which is not in this batch.")
        cursor[int(sub_text)] = int(event_text)
    return cursor


def format_cursor(cursor: dict[int, int]) -> str:
    return ",".join(f"{sub}:{event}" for sub, event in sorted(cursor.items()))


@dataclass(frozen=True)
class BatchEvent:
    """A variant's event, with the stream's resume point after it (None for an event that is not kept)."""

    event: SubmissionEvent
    cursor: str | None


async def follow_batch(
    pool: asyncpg.Pool,
    batch: BatchRow,
    cursor: dict[int, int],
    pace: FollowPace,
    feed: EventFeed | None = None,
) -> AsyncIterator[BatchEvent]:
    """Every variant's events after the cursor, merged as they come, until each variant's `result`."""
    merged: asyncio.Queue[SubmissionEvent | BaseException | None] = asyncio.Queue()

    async def one(sub_id: int) -> None:
        try:
            async for event in follow(pool, sub_id, cursor.get(sub_id), pace, feed):
                await merged.put(event)
        except Exception as exc:
            await merged.put(exc)
            return
        await merged.put(None)

    position = dict(cursor)
    readers = [asyncio.create_task(one(s), name=f"batch-{batch.id}-{s}") for s in batch.submission_ids]
    try:
        left = len(readers)
        while left:
            item = await merged.get()
            if item is None:
                left -= 1
                continue
            if isinstance(item, BaseException):
                raise item
            if item.id is not None:
                position[item.submission_id] = item.id
            yield BatchEvent(item, format_cursor(position) if item.id is not None else None)
    finally:
        for reader in readers:
            reader.cancel()
        for reader in readers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
