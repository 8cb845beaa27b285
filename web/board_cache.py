"""Contest boards computed at most once per `ttl_s` each, served stale while a fresh copy is computed.

A live or upsolve board is computed from the contest's ranked runs on every read (`core.contests`): at 1M
submissions, the upsolve board of a contest that ended months ago reads some 90,000 runs and takes over a second.
Here each board is computed by one request at a time (others for the same board wait for that one), kept, and
served as it is for `ttl_s`; after that the next reader still gets the kept copy at once and starts a fresh
computation in the background. Only the first reader of a board waits for it. A board is thus at most `ttl_s` plus
one computation old, and the page says when it was computed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
Monotonic = Callable[[], float]


@dataclass(frozen=True)
class Kept(Generic[T]):
    value: T
    at: float  # when its computation started, on the cache's clock: its age counts the computation


class StaleWhileRevalidate(Generic[T]):
    """At most `size` values by key, least recently read dropped first; `ttl_s` 0 computes every read."""

    def __init__(self, ttl_s: float, size: int = 64, clock: Monotonic = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._size = size
        self._clock = clock
        self._kept: OrderedDict[Hashable, Kept[T]] = OrderedDict()
        self._running: dict[Hashable, asyncio.Task[Kept[T]]] = {}

    async def get(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> Kept[T]:
        if self._ttl_s <= 0:
            return Kept(await compute(), self._clock())
        kept = self._kept.get(key)
        if kept is None:
            # shield: a reader who goes away must not cancel the computation the others wait for.
            return await asyncio.shield(self._start(key, compute))
        self._kept.move_to_end(key)
        if self._clock() - kept.at >= self._ttl_s:
            self._start(key, compute)
        return kept

    def holds(self, key: Hashable) -> bool:
        """Whether `key` is kept or being computed."""
        return key in self._kept or key in self._running

    def warm(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> None:
        """Start computing `key` now, unless it is kept or being computed (or nothing is kept: `ttl_s` 0), so that its
        first reader finds it ready or under way. Returns at once; a failure is logged, and a read computes again."""
        if self._ttl_s > 0 and key not in self._kept:
            self._start(key, compute)

    def _start(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> asyncio.Task[Kept[T]]:
        running = self._running.get(key)
        if running is None:
            running = asyncio.create_task(self._compute(key, compute), name=f"board-{key}")
            running.add_done_callback(_retrieved)
            self._running[key] = running
        return running

    async def _compute(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> Kept[T]:
        started = self._clock()
        try:
            kept = Kept(await compute(), started)
        finally:
            del self._running[key]
        self._kept[key] = kept
        self._kept.move_to_end(key)
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)
        return kept


def _retrieved(task: asyncio.Task[Kept[T]]) -> None:
    """A refresh nobody waits for may fail (the store went away): the readers keep the old copy, a later read retries,
    and the failure is logged here rather than as an exception never retrieved."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("a board could not be computed: %r", exc)
