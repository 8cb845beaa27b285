"""Live progress of submissions, without Discord: the dispatcher's event hook fans events out to followers.

`ProgressHub.on_event` is the Dispatcher's `on_event` hook. A follower (the bot's live message, a test)
subscribes to one submission and reads its events in order; events that arrive before anyone subscribed are
kept for a while, so a follower that subscribes just after submitting misses nothing. `ProgressState` folds
events into what a live message shows, and `EditThrottle` spaces the edits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from contract.wire import JobEvent
from core.ratelimit import describe_wait
from core.store.jobs import PLACE_CAP

log = logging.getLogger(__name__)


class Subscription:
    """The events of one submission, in order. Use as an async context manager and call `next(timeout)`."""

    def __init__(self, hub: ProgressHub, submission_id: int, backlog: list[JobEvent]) -> None:
        self._hub = hub
        self.submission_id = submission_id
        self._queue: asyncio.Queue[JobEvent] = asyncio.Queue()
        for event in backlog:
            self._queue.put_nowait(event)

    def push(self, event: JobEvent) -> None:
        self._queue.put_nowait(event)

    async def next(self, timeout: float) -> JobEvent | None:
        """The next event, or None when none came within `timeout` seconds."""
        if not self._queue.empty():
            return self._queue.get_nowait()
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that lands as an event
            # arrives, and the tracker's loop would never stop.
            async with asyncio.timeout(max(timeout, 0.0)):
                return await self._queue.get()
        except TimeoutError:
            return None

    def drain(self) -> list[JobEvent]:
        """The events already waiting, without waiting for more."""
        drained: list[JobEvent] = []
        while not self._queue.empty():
            drained.append(self._queue.get_nowait())
        return drained

    def close(self) -> None:
        self._hub.unsubscribe(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class ProgressHub:
    """Routes dispatcher events to the subscribers of each submission; keeps the latest unclaimed ones. Also
    knows which GPU types have no runner answering (the dispatcher's `on_runner_state` hook), so that a live
    message can say its job waits for one."""

    def __init__(self, keep_submissions: int = 256, keep_events: int = 512) -> None:
        self._subscribers: dict[int, list[Subscription]] = {}
        self._backlog: OrderedDict[int, list[JobEvent]] = OrderedDict()
        self._keep_submissions = keep_submissions
        self._keep_events = keep_events
        self._outages: dict[str, float] = {}

    def on_runner_state(self, gpu_type: str, down_since: float | None) -> None:
        """The Dispatcher's runner-state hook: since when (`time.monotonic()`) no runner of `gpu_type` answers,
        or None once one does."""
        if down_since is None:
            self._outages.pop(gpu_type, None)
        else:
            self._outages[gpu_type] = down_since

    def runner_outage_s(self, gpu_type: str) -> float | None:
        """How long no runner of `gpu_type` has answered, or None while one does."""
        since = self._outages.get(gpu_type)
        return None if since is None else max(0.0, time.monotonic() - since)

    async def on_event(self, submission_id: int, event: JobEvent) -> None:
        """The Dispatcher's event hook."""
        subscribers = self._subscribers.get(submission_id)
        if subscribers:
            for subscription in subscribers:
                subscription.push(event)
            return
        backlog = self._backlog.setdefault(submission_id, [])
        self._backlog.move_to_end(submission_id)
        backlog.append(event)
        del backlog[: -self._keep_events]
        while len(self._backlog) > self._keep_submissions:
            self._backlog.popitem(last=False)

    def subscribe(self, submission_id: int) -> Subscription:
        """Follow `submission_id` from the first event kept for it."""
        subscription = Subscription(self, submission_id, self._backlog.pop(submission_id, []))
        self._subscribers.setdefault(submission_id, []).append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.submission_id, [])
        if subscription in subscribers:
            subscribers.remove(subscription)
        if not subscribers:
            self._subscribers.pop(subscription.submission_id, None)


def describe_place(position: int) -> str:
    """'4', or '200+' for a place at the count's cap (core.store.jobs.PLACE_CAP: the place reads at most that
    many waiting users)."""
    return f"{position:,}+" if position >= PLACE_CAP else f"{position:,}"


def describe_start(start_in_s: float | None, position: int = 0) -> str:
    """' · starts in about 2 minutes', or nothing when there is no estimate; 'in over' for a place at the cap,
    whose estimate is the least it can be."""
    if start_in_s is None:
        return ""
    if start_in_s < 10:
        return " · starts in a few seconds"
    return f" · starts in {'over' if position >= PLACE_CAP else 'about'} {describe_wait(start_in_s)}"


@dataclass
class ProgressState:
    """What a live message shows, folded from a submission's events (a retried job starts over)."""

    queue_position: int | None = None
    device: str | None = None
    events: list[JobEvent] = field(default_factory=list)
    attempt: int = 1
    done: bool = False
    gpu_type: str | None = None
    runner_outage_s: float | None = None
    """Set while no runner of the job's GPU type answers: how long it has been."""
    start_in_s: float | None = None
    """While queued: when the job should start, from the latest jobs of its GPU type (None: nothing to go by)."""

    def apply(self, event: JobEvent) -> None:
        if event.type == "accepted":
            if self.events:  # the dispatcher retried the job: its events start again from 1
                self.attempt += 1
                self.events = []
            self.device = event.message or self.device
            self.queue_position = None
        self.events.append(event)
        if event.type == "done":
            self.done = True

    @property
    def status(self) -> str:
        """One line: where the submission is now."""
        retry = f" (attempt {self.attempt})" if self.attempt > 1 else ""
        last = self.events[-1] if self.events else None
        if self.runner_outage_s is not None and not self.done:
            gpu = f"`{self.gpu_type}` " if self.gpu_type else ""
            down = f" (no answer for {self.runner_outage_s / 60:.0f} min)" if self.runner_outage_s >= 60 else ""
            return f"⏸️ Waiting for the {gpu}runner to come back{down}{retry}"
        if last is None:
            if self.queue_position:
                start = describe_start(self.start_in_s, self.queue_position)
                return f"⏳ Queued: position {describe_place(self.queue_position)}{start}{retry}"
            return f"⏳ Waiting for a runner{retry}"
        where = f" on {self.device}" if self.device else ""
        if last.type == "accepted":
            return f"🚀 Starting{where}{retry}"
        if last.type == "compiling":
            return f"🛠️ Compiling{where}{retry}"
        if last.type == "compiled":
            return f"🧪 Testing{where}{retry}"
        if last.type == "test_case" and last.index is not None and last.count:
            return f"🧪 Test case {last.index + 1}/{last.count}{where}{retry}"
        if last.type == "benchmark_case" and last.phase == "profile":
            return f"🔬 Profiling {last.message.removeprefix('profiling ')} under Nsight Compute{where}{retry}"
        if last.type == "benchmark_case" and last.index is not None and last.count:
            return f"⏱️ Benchmark case {last.index + 1}/{last.count}{where}{retry}"
        if last.type == "done":
            return "📝 Recording the result"
        return f"⚙️ Running{where}{retry}"


class EditThrottle:
    """Spaces edits of one message at least `interval_s` apart; the caller passes a monotonic clock."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._last: float | None = None

    def wait_s(self, now: float) -> float:
        """Seconds until the next edit is allowed (0 when it is allowed now)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.interval_s - now)

    def mark(self, now: float) -> None:
        self._last = now
