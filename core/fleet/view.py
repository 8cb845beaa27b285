"""A dispatcher's view of the fleet: the live runners read from the store, kept in its `RunnerPool`.

Every `refresh_s` the view reads the runners that are registered and were heard from within the heartbeat
timeout, builds a `JobRunner` for each new one (through the front end's `make_runner`, which knows the HTTP
client), and updates the pool: a runner that joined gets jobs at once, a draining or quarantined one gets no new
job (no ranked job), and one that left is dropped; the dispatcher requeues the job it held (`Dispatcher`
watches `RunnerPool.is_live`). It also sweeps silent runners out of their pools, so that the fleet moves on even
when no API replica runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import asyncpg

from contract.runner_client import JobRunner
from core.dispatch import RunnerPool
from core.fleet import FleetSettings, sweep_silent
from core.store import fleet as store
from core.store.fleet import LiveRunner
from core.store.outage import STORE_ERRORS

log = logging.getLogger(__name__)

# How stale a registered runner's last heartbeat may be for a view that has just started to still count it live.
STARTUP_TRUST_S = 3600.0

RunnerFactory = Callable[[LiveRunner], JobRunner]
"""Builds the client of one live runner: its URL, its secret to sign with, its GPU type and slots."""


class FleetView:
    """Keeps a `RunnerPool` equal to the fleet's live runners."""

    def __init__(
        self, pool: asyncpg.Pool, runners: RunnerPool, make_runner: RunnerFactory, settings: FleetSettings
    ) -> None:
        self._pool = pool
        self._runners = runners
        self._make_runner = make_runner
        self._settings = settings
        # One client per join (runner id): a runner that joins again is a new runner with a new secret.
        self._built: dict[int, JobRunner] = {}
        self._started = time.monotonic()
        self._unbuildable: set[int] = set()
        self.live: list[LiveRunner] = []
        self.pools: list[str] = []

    async def refresh(self) -> None:
        """Read the live runners and update the pool.

        For its first heartbeat timeout the view neither sweeps nor judges silence: while no API service ran (a
        restart of the only replica, an upgrade), runners' heartbeats had nowhere to go, and a view that judged
        them by that silence would drop every runner, and requeue every job in flight, the moment it started.
        A runner that really died is found by its dispatcher's calls failing, and by the sweep once the grace
        is over."""
        timeout_s = self._settings.heartbeat_timeout_s
        if time.monotonic() - self._started < timeout_s:
            timeout_s = STARTUP_TRUST_S
        else:
            await sweep_silent(self._pool, self._settings)
        live = await store.live_runners(self._pool, timeout_s)
        self.pools = await store.pool_types(self._pool)
        built: dict[int, JobRunner] = {}
        for runner in live:
            existing = self._built.get(runner.id)
            if existing is None:
                try:
                    existing = self._make_runner(runner)
                except Exception as exc:
                    # Once per runner, not at every refresh: the reason does not change until the runner does.
                    if runner.id not in self._unbuildable:
                        self._unbuildable.add(runner.id)
                        log.warning("runner %s (%d) gets no job: %s", runner.name, runner.id, exc)
                    continue
            built[runner.id] = existing
        self._built = built
        self.live = live
        joined, left = self._runners.update(
            built.values(),
            draining=[r.name for r in live if r.state == "draining"],
            quarantined=[r.name for r in live if r.quarantined],
            in_flight={r.name: r.in_flight for r in live},
        )
        for name in joined:
            log.info("runner %s takes jobs", name)
        for name in left:
            log.info("runner %s left the pool", name)

    def gpu_types(self) -> list[str]:
        """The GPU types submissions may ask for: every pool, whether or not a runner of it is live now."""
        return sorted(set(self.pools) | set(self._runners.gpu_types()))

    async def run(self) -> None:
        """Refresh until cancelled, riding out store errors."""
        while True:
            try:
                await self.refresh()
            except STORE_ERRORS as exc:
                log.warning("fleet view: store error (%s: %s); trying again", type(exc).__name__, exc)
            except Exception:
                log.exception("fleet view: refresh failed; trying again")
            await asyncio.sleep(self._settings.refresh_s)
