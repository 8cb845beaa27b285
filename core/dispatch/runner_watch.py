"""Runners that do not answer: set aside, probed every `runner_probe_s` until they answer again, and the hook told
when a GPU type loses its last answering runner and when one is back."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from contract.errors import RunnerUnavailableError
from contract.runner_client import JobRunner
from core.dispatch.pool import RunnerPool
from core.settings import DispatchSettings

log = logging.getLogger(__name__)

RunnerStateHook = Callable[[str, float | None], None]
"""Called with (GPU type, `time.monotonic()` since when none of its runners answers, or None once one does)."""


class RunnerWatch:
    """Which runners of the pool stopped answering, the probes that find them back, and the outages per GPU type
    that the hook `on_runner_state` was told of."""

    def __init__(
        self, runners: RunnerPool, settings: DispatchSettings, on_runner_state: RunnerStateHook | None
    ) -> None:
        self._runners = runners
        self._settings = settings
        self._on_runner_state = on_runner_state
        self._probes: dict[str, asyncio.Task[None]] = {}
        self._next_probe: dict[str, float] = {}
        # Per GPU type, the outage the hook was last told of (since when, or None: runners answer).
        self._outages: dict[str, float | None] = {}

    def probes(self) -> list[asyncio.Task[None]]:
        """The probes under way, one per runner that does not answer."""
        return list(self._probes.values())

    def runner_down(self, runner: JobRunner, now: float, exc: RunnerUnavailableError) -> None:
        if self._runners.mark_down(runner, now):
            log.warning("runner %s (%s) does not answer: %s; jobs wait for it", runner.name, runner.gpu_type, exc)
            self._next_probe[runner.name] = now + self._settings.runner_probe_s
            self._tell_runner_state(runner.gpu_type)

    def runner_up(self, runner: JobRunner) -> None:
        since = self._runners.down_since(runner)
        if since is not None and self._runners.mark_up(runner):
            log.info("runner %s answers again after %.1f s", runner.name, time.monotonic() - since)
            self._tell_runner_state(runner.gpu_type)

    def _tell_runner_state(self, gpu_type: str) -> None:
        if self._on_runner_state is None:
            return
        since = self._runners.outage_since(gpu_type)
        self._outages[gpu_type] = since
        try:
            self._on_runner_state(gpu_type, since)
        except Exception:
            log.exception("GPU type %s: the runner-state hook failed", gpu_type)

    def tell_outage_changes(self) -> None:
        """Tell the hook of every GPU type whose outage began or ended since it was last told, however it changed:
        the fleet's view dropped the runner that stopped answering, or another runner of the type joined."""
        for gpu_type in {*self._runners.gpu_types(), *self._outages}:
            since = self._runners.outage_since(gpu_type)
            if (since is None) != (self._outages.get(gpu_type) is None):
                self._tell_runner_state(gpu_type)

    def probe_down_runners(self) -> None:
        now = time.monotonic()
        for runner in self._runners.down():
            if runner.name in self._probes or now < self._next_probe.get(runner.name, 0.0):
                continue
            self._next_probe[runner.name] = now + self._settings.runner_probe_s
            task = asyncio.create_task(self._probe(runner), name=f"probe-{runner.name}")
            self._probes[runner.name] = task
            task.add_done_callback(lambda _, name=runner.name: self._probes.pop(name, None))

    async def _probe(self, runner: JobRunner) -> None:
        probe: Callable[[], Awaitable[bool]] | None = getattr(runner, "probe", None)
        try:
            answers = True if probe is None else await probe()
        except Exception:
            log.exception("runner %s: the probe failed", runner.name)
            answers = False
        if answers:
            self.runner_up(runner)
