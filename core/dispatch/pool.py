"""The runners a dispatcher may use: which of their slots are busy, which runners do not answer, and what the
fleet's view says of each (gone, draining, quarantined, filled by other dispatchers)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Mapping

from contract.runner_client import JobRunner


class RunnerPool:
    """The runners this dispatcher may use, and which of their slots are busy."""

    def __init__(self, runners: Iterable[JobRunner] = ()) -> None:
        self._runners = {r.name: r for r in runners}
        self._busy: dict[str, int] = dict.fromkeys(self._runners, 0)
        self._down: dict[str, float] = {}
        # Runners given here (a local one) stay whatever the fleet's view says.
        self._static = frozenset(self._runners)
        # The fleet's view (`update`): runners no longer listed that still finish a job in flight (`gone`), runners
        # that finish their jobs but take no new one (`draining`), and those whose canaries drifted (no ranked job).
        self._gone: set[str] = set()
        self._draining: set[str] = set()
        self._quarantined: set[str] = set()
        # Slots of each fleet runner taken by other dispatchers' jobs, from the store's count at the last update (or
        # a claim that found the runner full): this dispatcher tries no claim for a runner they fill.
        self._elsewhere: dict[str, int] = {}
        self.freed = asyncio.Event()

    def update(
        self,
        runners: Iterable[JobRunner],
        *,
        draining: Iterable[str] = (),
        quarantined: Iterable[str] = (),
        in_flight: Mapping[str, int] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Make the pool the given runners (the fleet's live ones, read from the store): new ones join, a runner
        object that changed (a runner that joined again) replaces the old one, and one no longer listed leaves
        once its jobs are done. `in_flight` is the store's count of each runner's jobs in flight, every
        dispatcher's: those beyond this one's own take slots here too. Returns the names that joined and those that
        left."""
        listed = {r.name: r for r in runners if r.name not in self._static}
        listed |= {name: self._runners[name] for name in self._static}
        joined = [name for name, r in listed.items() if self._runners.get(name) is not r]
        for name in joined:
            self._runners[name] = listed[name]
            self._busy.setdefault(name, 0)
            self._down.pop(name, None)
        left = [name for name in self._runners if name not in listed and name not in self._gone]
        self._gone = {name for name in self._runners if name not in listed}
        for name in list(self._gone):
            if self._busy.get(name, 0) == 0:
                self._drop(name)
        self._draining = set(draining) & set(listed)
        self._quarantined = set(quarantined) & set(listed)
        counted = in_flight or {}
        self._elsewhere = {
            name: count - self._busy.get(name, 0)
            for name, count in counted.items()
            if count > self._busy.get(name, 0) and name in listed
        }
        if joined:
            self.freed.set()
        return joined, left

    def _drop(self, name: str) -> None:
        self._runners.pop(name, None)
        self._busy.pop(name, None)
        self._down.pop(name, None)
        self._gone.discard(name)

    def members(self, gpu_type: str | None = None) -> list[JobRunner]:
        """The runners in the pool (of `gpu_type`), gone ones finishing a job excluded."""
        return [
            r
            for name, r in self._runners.items()
            if name not in self._gone and (gpu_type is None or r.gpu_type == gpu_type)
        ]

    def is_live(self, name: str) -> bool:
        """Whether the runner is still in the pool: listed by the fleet (always, in a static pool)."""
        return name in self._runners and name not in self._gone

    def quarantined(self, name: str) -> bool:
        return name in self._quarantined

    def capacity(self, gpu_type: str) -> int:
        """The slots of the runners of `gpu_type` that take new jobs."""
        return sum(r.slots for r in self._runners.values() if r.gpu_type == gpu_type and self._takes_jobs(r.name))

    def _takes_jobs(self, name: str) -> bool:
        return name not in self._gone and name not in self._draining

    def gpu_types(self) -> list[str]:
        return sorted({r.gpu_type for r in self._runners.values()})

    def acquire(self, gpu_type: str, *, passed_over: Collection[str] = ()) -> JobRunner | None:
        """Reserve a slot on the least busy answering runner of `gpu_type`, or None when all are busy or down;
        `passed_over` names runners not to choose (full by the store's count)."""
        # One walk, in the pool's order, that stops at the first idle runner: what `min` over the free ones would
        # choose (the first of the least busy), without building the list on every claim of a fleet of many.
        runner: JobRunner | None = None
        least = 1.0
        for r in self._runners.values():
            name = r.name
            busy = self._busy[name]
            if (
                r.gpu_type != gpu_type
                or name in passed_over
                or busy + self._elsewhere.get(name, 0) >= r.slots
                or name in self._down
                or not self._takes_jobs(name)
            ):
                continue
            share = busy / r.slots
            if runner is None or share < least:
                runner, least = r, share
                if busy == 0:
                    break
        if runner is None:
            return None
        self._busy[runner.name] += 1
        return runner

    def mark_full(self, name: str) -> None:
        """The store says other dispatchers fill the runner's free slots: none is tried until the next update."""
        runner = self._runners.get(name)
        if runner is not None:
            self._elsewhere[name] = max(runner.slots - self._busy.get(name, 0), 0)

    def acquire_named(self, name: str) -> JobRunner | None:
        """Reserve a slot on the runner called `name` (to re-attach to a job it holds)."""
        runner = self._runners.get(name)
        if runner is None or name in self._gone or self._busy[name] >= runner.slots:
            return None
        self._busy[name] += 1
        return runner

    def release(self, runner: JobRunner, *, wake: bool = True) -> None:
        """Give a slot back; `wake` tells the dispatcher that there is room for another job."""
        if runner.name in self._busy:
            self._busy[runner.name] = max(self._busy[runner.name] - 1, 0)
            if self._busy[runner.name] == 0 and runner.name in self._gone:
                self._drop(runner.name)
        if wake:
            self.freed.set()

    def mark_down(self, runner: JobRunner, now: float) -> bool:
        """The runner stopped answering: no new job goes to it. True when it was answering until now."""
        if runner.name in self._down:
            return False
        self._down[runner.name] = now
        return True

    def mark_up(self, runner: JobRunner) -> bool:
        """The runner answers again; wakes the dispatcher. True when it was down until now."""
        if self._down.pop(runner.name, None) is None:
            return False
        self.freed.set()
        return True

    def down_since(self, runner: JobRunner) -> float | None:
        return self._down.get(runner.name)

    def down(self) -> list[JobRunner]:
        """The runners that do not answer now."""
        return [self._runners[name] for name in self._down]

    def outage_since(self, gpu_type: str) -> float | None:
        """Since when no runner of `gpu_type` answers (`time.monotonic()`), or None when one does."""
        since = [self._down.get(r.name) for r in self._runners.values() if r.gpu_type == gpu_type]
        if not since or any(s is None for s in since):
            return None
        return max(s for s in since if s is not None)
