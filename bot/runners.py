"""The runners the bot dispatches to: the fleet's (runners that joined their pool at the API service, read from
the store) and, where asked, a local one.

`RunnerSet` owns them (and closes the local runner's workers on shutdown); `statuses()` answers `/mod runners`
with each runner's state in its pool, its canary quarantine, and the health of those the bot can reach.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import aiohttp
import asyncpg

from bot.bot_settings import BotSettings
from contract.runner_client import JobRunner, ProblemValidator
from contract.wire import HealthInfo
from core.dispatch import RunnerPool
from core.errors import UserFacingError
from core.fleet import FleetSettings
from core.fleet.view import FleetView
from core.store import fleet as fleet_store
from core.store.fleet import LiveRunner
from runner.clients.http import RunnerConfigError, RunnerError
from runner.clients.local import LocalRunner, LocalValidator, detect_gpu_type
from runner.clients.remote import RemoteRunner, fleet_runner

log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 5.0
# The runners `/mod runners` reads: the latest join of each name among these is shown (the embed shows 25 at most).
MAX_RUNNER_ROWS = 1000
# Runners out of their pool that are still shown: someone must act (fix the host, or restore a credential). One
# that left (it drained, or went silent) registers again by itself when it is back, and is shown then.
SHOWN_GONE_STATES = ("refused", "revoked")


@dataclass(frozen=True)
class RunnerStatus:
    name: str
    gpu_type: str
    kind: str  # "local" or "fleet"
    slots: int
    health: HealthInfo | None
    error: str | None
    refused: str | None = None  # why no job goes to it (refused by its pool, revoked)
    state: str | None = None  # its state in its pool: active, draining, left, ...
    quarantine: str | None = None  # why its canaries put it in quarantine (no ranked job)


def _health_error(exc: RunnerError | TimeoutError) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {HEALTH_TIMEOUT_S:g} s"
    if exc.status == 0:
        return "no answer"
    if exc.code == "http_error":
        return f"HTTP {exc.status}"
    return f"HTTP {exc.status} {exc.code}: {exc.message}"


def _shown_runners(rows: list[fleet_store.RunnerRow]) -> list[fleet_store.RunnerRow]:
    """The latest join of each runner name, when it is in its pool or was turned away; in the rows' order."""
    latest: dict[str, fleet_store.RunnerRow] = {}
    for row in rows:
        if row.name not in latest or row.id > latest[row.name].id:
            latest[row.name] = row
    return [
        row
        for row in rows
        if latest[row.name] is row and (row.state in (*fleet_store.LIVE, "joined") or row.state in SHOWN_GONE_STATES)
    ]


@dataclass
class RunnerSet:
    pool: asyncpg.Pool
    local: LocalRunner | None = None
    local_validator: LocalValidator | None = None
    view: FleetView | None = None
    dispatch_pool: RunnerPool = field(default_factory=RunnerPool)
    unusable: dict[int, str] = field(default_factory=dict)
    """Why this bot sends no job to a live fleet runner, by runner id: its client could not be built."""

    @property
    def runners(self) -> list[JobRunner]:
        """The runners the dispatcher starts with: the local one; the fleet's join through `view`."""
        return [self.local] if self.local is not None else []

    def validator(self, gpu_type: str | None = None) -> ProblemValidator:
        """A runner for an admission self-test: of `gpu_type` when given, else the first one there is."""
        candidates: list[ProblemValidator] = [r for r in self.dispatch_pool.members() if isinstance(r, RemoteRunner)]
        if self.local_validator is not None:
            candidates.append(self.local_validator)
        for candidate in candidates:
            if gpu_type is None or candidate.gpu_type == gpu_type:
                return candidate
        offered = ", ".join(sorted({c.gpu_type for c in candidates})) or "none"
        raise UserFacingError(f"No runner of GPU type `{gpu_type}` can run the self-test; choose one of {offered}.")

    async def statuses(self) -> list[RunnerStatus]:
        found: list[RunnerStatus] = []
        if self.local is not None:
            found.append(RunnerStatus(self.local.name, self.local.gpu_type, "local", self.local.slots, None, None))
        if self.view is None:
            return found
        reachable = {r.name: r for r in self.dispatch_pool.members() if isinstance(r, RemoteRunner)}
        rows = _shown_runners(await fleet_store.list_runners(self.pool, include_gone=True, limit=MAX_RUNNER_ROWS))
        found += await asyncio.gather(*(self._fleet_status(row, reachable.get(row.name)) for row in rows))
        return found

    async def _fleet_status(self, row: fleet_store.RunnerRow, runner: RemoteRunner | None) -> RunnerStatus:
        quarantine = row.quarantine_reason if row.quarantined else None
        if row.state in SHOWN_GONE_STATES:
            # Not unreachable: its pool or an operator turned it away, and it stays away until someone acts.
            why = row.note or row.state
            return RunnerStatus(row.name, row.gpu_type, "fleet", row.slots, None, None, why, row.state, quarantine)
        unusable = self.unusable.get(row.id)
        if runner is None and unusable is not None:
            # Live in its pool, but this bot will not send it jobs (a plain-http address on another host).
            return RunnerStatus(row.name, row.gpu_type, "fleet", row.slots, None, None, unusable, row.state, quarantine)
        if runner is None:
            why = row.note or ("not heard from" if row.state in ("active", "draining") else row.state)
            return RunnerStatus(row.name, row.gpu_type, "fleet", row.slots, None, why, None, row.state, quarantine)
        try:
            health = await asyncio.wait_for(runner.health(), HEALTH_TIMEOUT_S)
        except (RunnerError, TimeoutError) as exc:
            # Moderators read this in Discord: the cause, never the runner's address (that goes to the log).
            log.warning("runner %s (%s): health check failed: %r", runner.name, runner.url, exc)
            return RunnerStatus(
                row.name, row.gpu_type, "fleet", row.slots, None, _health_error(exc), None, row.state, quarantine
            )
        # Its pool checked its hardware at registration; the dispatcher still refuses it when its health says
        # another GPU (another host behind the address), and the moderator reads why here.
        refused = runner.check_gpu_type(health)
        return RunnerStatus(row.name, row.gpu_type, "fleet", row.slots, health, None, refused, row.state, quarantine)

    async def aclose(self) -> None:
        if self.local is not None:
            await self.local.aclose()


async def build_runners(settings: BotSettings, session: aiohttp.ClientSession, pool: asyncpg.Pool) -> RunnerSet:
    """The fleet's runners when a fleet is set up (or `fleet` is on), plus a local one when `local_runner` asks
    for it (by default: when there is no fleet)."""
    fleet_settings = FleetSettings()
    use_fleet = settings.fleet == "on" or (settings.fleet == "auto" and await fleet_store.any_join_token(pool))
    built = RunnerSet(pool)
    if settings.local_runner == "on" or (settings.local_runner == "auto" and not use_fleet):
        gpu_type = await asyncio.to_thread(detect_gpu_type, settings.local_device)
        built.local = LocalRunner(gpu_type=gpu_type, slots=settings.local_slots, measure=settings.local_measure)
        built.local_validator = LocalValidator(gpu_type)
        log.info("local runner serves %s with %d slot(s)", gpu_type, settings.local_slots)
    built.dispatch_pool = RunnerPool(built.runners)
    if use_fleet:

        def make(live: LiveRunner) -> JobRunner:
            try:
                runner = fleet_runner(
                    live,
                    session,
                    ca_file=fleet_settings.runner_ca_file,
                    allow_plain_http=fleet_settings.allow_plain_http,
                )
            except RunnerConfigError as exc:
                # Moderators read why in `/mod runners`; the view logs it and sends the runner no job.
                built.unusable[live.id] = exc.message
                raise
            built.unusable.pop(live.id, None)
            return runner

        built.view = FleetView(pool, built.dispatch_pool, make, fleet_settings)
        await built.view.refresh()  # the pools' runners are known before the first command is answered
        log.info("fleet: %d runner(s) live", len(built.view.live))
    elif built.local is None:
        log.warning("no fleet is set up and the local runner is off: submissions will wait in the queue")
    return built
