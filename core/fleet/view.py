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
from dataclasses import replace

import asyncpg

from contract.names import rank_pool
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


def rank_slot_name(runner: str, ranks: int) -> str:
    """The name a runner's slots of `ranks` ranks go by in a dispatcher's pool (and in `jobs.runner`)."""
    return f"{runner}/x{ranks}"


def members_of(runner: LiveRunner) -> list[tuple[int, LiveRunner]]:
    """The runner as a dispatcher's pool takes it: its one-device slots, then one member per rank count of its rank
    slots, serving the rank pool (`cpux2`) with as many slots as it has of that count. Their jobs in flight are
    this dispatcher's own count: the store counts a runner's jobs by its own name."""
    members = [(1, runner)]
    for ranks in sorted(set(runner.rank_slots)):
        members.append(
            (
                ranks,
                replace(
                    runner,
                    name=rank_slot_name(runner.name, ranks),
                    gpu_type=rank_pool(runner.gpu_type, ranks),
                    slots=runner.rank_slots.count(ranks),
                    in_flight=0,
                ),
            )
        )
    return members


class FleetView:
    """Keeps a `RunnerPool` equal to the fleet's live runners."""

    def __init__(
        self, pool: asyncpg.Pool, runners: RunnerPool, make_runner: RunnerFactory, settings: FleetSettings
    ) -> None:
        self._pool = pool
        self._runners = runners
        self._make_runner = make_runner
        self._settings = settings
        # One client per join (runner id) and per slot size (1, or a rank slot's N): a runner that joins again is a
        # new runner with a new secret.
        self._built: dict[tuple[int, int], JobRunner] = {}
        self._started = time.monotonic()
        self._unbuildable: set[int] = set()
        self.live: list[LiveRunner] = []
        self.pools: list[str] = []
        # Every rank pool (`cpux2`) a member of this view has served: kept after its runner left, since the pool may
        # still hold that member while it finishes a job, and its type must not pass for a one-device pool then.
        self._rank_pools: set[str] = set()

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
        built: dict[tuple[int, int], JobRunner] = {}
        for runner in live:
            for ranks, member in members_of(runner):
                existing = self._built.get((runner.id, ranks))
                if existing is None:
                    try:
                        existing = self._make_runner(member)
                    except Exception as exc:
                        # Once per runner, not at every refresh: the reason does not change until the runner does.
                        if runner.id not in self._unbuildable:
                            self._unbuildable.add(runner.id)
                            log.warning("runner %s (%d) gets no job: %s", runner.name, runner.id, exc)
                        continue
                built[runner.id, ranks] = existing
                if ranks > 1:
                    self._rank_pools.add(member.gpu_type)
        self._built = built
        self.live = live
        joined, left = self._runners.update(
            built.values(),
            draining=[m.name for r in live if r.state == "draining" for _, m in members_of(r)],
            quarantined=[m.name for r in live if r.quarantined for _, m in members_of(r)],
            in_flight={r.name: r.in_flight for r in live},
        )
        for name in joined:
            log.info("runner %s takes jobs", name)
        for name in left:
            log.info("runner %s left the pool", name)

    def gpu_types(self) -> list[str]:
        """The GPU types submissions may ask for: every pool, whether or not a runner of it is live now. Not the
        rank pools (`cpux2`) of the runners' rank slots: a distributed run reaches one through its world size
        (`contract.names.rank_pool`), and offered as a GPU type it would leave the only pool no longer the default.
        An operator's pool keeps its name whatever it looks like; the dispatcher reads its own `RunnerPool`."""
        return sorted(set(self.pools) | (set(self._runners.gpu_types()) - self._rank_pools))

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
