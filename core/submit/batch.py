"""Concurrent submissions stored together: one check statement and one submit statement for a whole batch.

A submission's statements cost PostgreSQL more to start, plan, check and commit than to do their work: the submit
statement stored 0.6 ms of server CPU's worth of rows one at a time, 0.33 ms a row eight at a time and 0.25 ms
thirty-two at a time on the 10-million-row store (bench/results/store_10m_submit.txt). So `SubmitBatcher` gathers
the requests that arrive while earlier batches are being stored and takes them through `persist_many` together.
Nothing waits for a batch to fill: a request that finds a batch slot free starts one at once, so a lone submission
takes the path it would alone, and batches grow only with the load.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass

import asyncpg

from core.settings import RateLimitSettings
from core.submit.intake import SubmitReceipt, SubmitRequest, persist_many, receipt_or_raise, validate_options

log = logging.getLogger(__name__)

# The most requests a batch takes: past some tens, a bigger statement saves little more and keeps its requests
# waiting for each other.
MAX_BATCH = 32
# Batches being stored at once, each on its own connection: two keep the server busy while one batch's commit waits
# for the disk and its rows' places are read.
MAX_IN_FLIGHT = 2


@dataclass(frozen=True)
class _Waiting:
    request: SubmitRequest
    receipt: asyncio.Future[SubmitReceipt]


class SubmitBatcher:
    """`core.submit.intake.submit` for concurrent callers, with their requests stored in batches."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        limits: RateLimitSettings,
        *,
        max_batch: int = MAX_BATCH,
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        self._pool = pool
        self._limits = limits
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        self._waiting: list[_Waiting] = []
        self._batches: set[asyncio.Task[None]] = set()
        self.sizes: Counter[int] = Counter()  # batches stored, by their number of requests

    async def submit(self, request: SubmitRequest) -> SubmitReceipt:
        """As `core.submit.intake.submit`: the receipt, or the UserFacingError that refuses the request."""
        validate_options(request)
        receipt: asyncio.Future[SubmitReceipt] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(request, receipt))
        self._start_batches()
        # A caller that stops waiting leaves its request to its batch (or drops it, if no batch has taken it yet):
        # a request half-stored is the one thing a batch must not leave behind.
        return await receipt

    def _start_batches(self) -> None:
        while self._waiting and len(self._batches) < self._max_in_flight:
            batch = [w for w in self._waiting[: self._max_batch] if not w.receipt.done()]
            del self._waiting[: self._max_batch]
            if not batch:
                continue
            task = asyncio.create_task(self._store(batch))
            self._batches.add(task)
            task.add_done_callback(self._batch_done)

    def _batch_done(self, task: asyncio.Task[None]) -> None:
        self._batches.discard(task)
        self._start_batches()

    async def _store(self, batch: list[_Waiting]) -> None:
        self.sizes[len(batch)] += 1
        try:
            async with self._pool.acquire() as conn:
                outcomes = await persist_many(conn, [w.request for w in batch], self._limits)
        except Exception as error:
            # The connection failed: every request of the batch gets the error, as it would have alone.
            for w in batch:
                if not w.receipt.done():
                    w.receipt.set_exception(error)
            return
        except BaseException:
            for w in batch:  # the service is stopping (cancel() leaves a receipt already set as it is)
                w.receipt.cancel()
            raise
        for w, outcome in zip(batch, outcomes, strict=True):
            if w.receipt.done():
                continue
            try:
                w.receipt.set_result(receipt_or_raise(w.request, outcome))
            except Exception as error:
                w.receipt.set_exception(error)

    async def close(self) -> None:
        """Wait for the batches being stored (a request they took is then stored or refused, not half-done)."""
        while self._batches:
            await asyncio.gather(*self._batches, return_exceptions=True)
