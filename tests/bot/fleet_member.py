"""A test's runner in the fleet: enrolled in-process through the calls the API service makes for a real runner.

A runner joins a pool as `arena runner serve --join` does, in the same order: `join` (a bootstrap token exchanged
for the runner's own secret), then the runner starts and checks requests with that secret, then `register` (its
URL and hardware, which the pool checks with the API's own `pool_mismatch`), then a heartbeat every
`heartbeat_s` until the test stops it (`go_silent`: the runner leaves its pool once the heartbeat timeout passes,
as a hung or partitioned host does). A heartbeat answered "left" registers again, as the real runner does.

The runner is either the real daemon application (`serve_daemon`, its hardware described by the daemon's own
probe) or a test double (`tests.store.faults.RunnerDouble`) standing in for a GPU host (`gpu_hardware`).

`fleet` is the fixture: the test's side of the API service, on the test's database, with the fleet's rhythm set
in the environment so that the bot (which reads `FleetSettings()` when it starts) keeps the same one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest
from aiohttp import web

from api.pool_check import pool_mismatch
from contract.wire import GpuHardware, RunnerHardware, RunnerHeartbeat, RunnerJoinRequest, RunnerRegistration
from core import fleet as core_fleet
from core.fleet import FleetSettings, RunnerGoneError
from core.store.outage import STORE_ERRORS
from core.store.pool import create_pool
from runner.daemon.membership import describe_hardware
from runner.daemon.server import JOBS, create_app
from runner.gpus import GpuModel
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)

# Beats often, and a silent runner leaves after a few missed beats: long enough that a busy 2-core machine never
# drops a healthy runner, short enough for a test that waits for a silent one to leave.
HEARTBEAT_S = 0.5
HEARTBEAT_TIMEOUT_S = 20.0
REFRESH_S = 0.3


@dataclass
class FleetMember:
    """One runner's standing in its pool, as the API service keeps it: joined, registered, heard from."""

    pool: asyncpg.Pool
    name: str
    runner_id: int
    secret: str
    gpu_type: str
    heartbeat_s: float
    url: str | None = None
    hardware: RunnerHardware | None = None
    _beats: asyncio.Task[None] | None = field(default=None, repr=False)

    async def register(self, url: str, hardware: RunnerHardware) -> None:
        """Register where dispatchers reach the runner and what it has, then keep it heard from. Raises
        `core.fleet.PoolMismatchError` when the pool refuses the hardware (the runner is then `refused`)."""
        await core_fleet.register(
            self.pool, self.runner_id, RunnerRegistration(url=url, hardware=hardware), pool_mismatch
        )
        self.url, self.hardware = url, hardware
        self.keep_heard_from()

    def keep_heard_from(self) -> None:
        """Send heartbeats (again), as a runner that is up does."""
        if self._beats is None or self._beats.done():
            self._beats = asyncio.create_task(self._heartbeats(), name=f"heartbeats-{self.name}")

    async def go_silent(self) -> None:
        """Stop the heartbeats: after the heartbeat timeout, the runner leaves its pool."""
        beats, self._beats = self._beats, None
        if beats is not None:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beats

    async def _heartbeats(self) -> None:
        while True:
            try:
                await core_fleet.heartbeat(self.pool, self.runner_id, RunnerHeartbeat())
            except RunnerGoneError as exc:
                if exc.state != "left" or self.url is None or self.hardware is None:
                    log.warning("runner %s: heartbeat refused for good: %s", self.name, exc)
                    return
                # The core did not hear from it for too long (a stalled test machine): register again, as the
                # real runner's Membership does.
                log.warning("runner %s left its pool (%s); registering again", self.name, exc)
                registration = RunnerRegistration(url=self.url, hardware=self.hardware)
                await core_fleet.register(self.pool, self.runner_id, registration, pool_mismatch)
            except STORE_ERRORS as exc:
                # The store is away (a test that kills it): a real runner's heartbeat fails at the API the same way.
                log.warning("runner %s: heartbeat failed (%s: %s)", self.name, type(exc).__name__, exc)
            await asyncio.sleep(self.heartbeat_s)


@dataclass
class TestFleet:
    """The API service's side of the fleet for one test: bootstrap tokens and the runners that joined."""

    __test__ = False  # not a test class, whatever pytest makes of its name

    pool: asyncpg.Pool
    settings: FleetSettings
    members: list[FleetMember] = field(default_factory=list)
    _tokens: dict[str, str] = field(default_factory=dict)

    async def token(self, gpu_type: str) -> str:
        """The pool's bootstrap token, made once: from then on the bot dispatches to the fleet."""
        if gpu_type not in self._tokens:
            made = await core_fleet.create_join_token(self.pool, gpu_type, lifetime=timedelta(hours=1))
            self._tokens[gpu_type] = made.token
        return self._tokens[gpu_type]

    async def join(self, name: str, gpu_type: str) -> FleetMember:
        """Join the pool `gpu_type` as `name`: the runner's own secret comes back, to serve with."""
        token = await self.token(gpu_type)
        joined = await core_fleet.join(self.pool, RunnerJoinRequest(token=token, name=name), self.settings)
        member = FleetMember(self.pool, name, joined.runner_id, joined.secret, joined.gpu_type, joined.heartbeat_s)
        self.members.append(member)
        return member

    async def aclose(self) -> None:
        for member in self.members:
            await member.go_silent()


@pytest.fixture
def fleet_heartbeat_timeout_s() -> float:
    """How long a silent runner stays in its pool (a test module that waits for one to leave overrides this)."""
    return HEARTBEAT_TIMEOUT_S


@pytest.fixture
async def fleet(
    db_dsn: str, fleet_heartbeat_timeout_s: float, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[TestFleet]:
    """The fleet on the test's database. Its rhythm goes to the environment, where the bot's `FleetSettings()`
    reads it when it starts."""
    monkeypatch.setenv("ARENA_FLEET_HEARTBEAT_S", str(HEARTBEAT_S))
    monkeypatch.setenv("ARENA_FLEET_HEARTBEAT_TIMEOUT_S", str(fleet_heartbeat_timeout_s))
    monkeypatch.setenv("ARENA_FLEET_REFRESH_S", str(REFRESH_S))
    async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30) as pool:
        test_fleet = TestFleet(pool, FleetSettings())
        try:
            yield test_fleet
        finally:
            await test_fleet.aclose()


# -- the runners ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedDaemon:
    url: str
    app: web.Application


@asynccontextmanager
async def serve_daemon(
    settings: RunnerSettings, secret: str, *, port: int = 0, scheme: str = "http"
) -> AsyncIterator[ServedDaemon]:
    """The real runner application on 127.0.0.1, checking requests with the runner's own `secret` (the one its
    join returned); `port` 0 lets the system pick one nothing else can take first."""
    app = create_app(settings, secret=secret.encode())
    app_runner = web.AppRunner(app, access_log=None)
    await app_runner.setup()  # starts the slots: the hardware is known from here
    try:
        ssl_context = settings.server_ssl_context() if scheme == "https" else None
        await web.TCPSite(app_runner, "127.0.0.1", port, reuse_address=True, ssl_context=ssl_context).start()
        host, bound = app_runner.addresses[0][:2]
        yield ServedDaemon(f"{scheme}://{host}:{bound}", app)
    finally:
        await app_runner.cleanup()


async def daemon_hardware(app: web.Application) -> RunnerHardware:
    """What the daemon really serves with, by its own probe (as `arena runner serve --join` reports it)."""
    return await asyncio.to_thread(describe_hardware, app[JOBS])


def gpu_hardware(model: GpuModel, slots: int) -> RunnerHardware:
    """The report of a host with one GPU of `model`: what a runner double stands in for."""
    gpu = GpuHardware(index=0, name=model.device_names[0], uuid=f"GPU-test-{model.key}", gpu_type=model.key)
    return RunnerHardware(device="gpu", gpu_type=model.key, gpus=[gpu], slots=slots, sandbox="full")


def daemon_settings(state_dir: Path, name: str, **overrides: object) -> RunnerSettings:
    """A CPU daemon's settings with no shared secret: it checks requests with the secret its join returned."""
    return RunnerSettings(state_dir=state_dir, device="cpu", max_queue=4, name=name, **overrides)  # type: ignore[arg-type]
