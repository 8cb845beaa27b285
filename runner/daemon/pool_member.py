"""Serving as a member of a pool: `arena runner serve --join URL --token-file F`.

The order matters. The runner joins first (it needs its own credential to check dispatchers' calls), then starts
its slots and listens, then registers its address and hardware (so no dispatcher calls before it can answer),
then sends heartbeats. SIGTERM or SIGINT drains it (`Membership`): no new job, the jobs in hand finish and their
results are read, then it leaves its pool and stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time

import aiohttp
from aiohttp import web

from runner.daemon.jobs import JobManager
from runner.daemon.membership import Membership, MembershipError, describe_hardware, read_token
from runner.daemon.server import JOBS, STREAMS, create_app
from runner.settings import RunnerSettings, SettingsError

log = logging.getLogger(__name__)

JOIN_RETRY_S = 2.0
JOIN_PATIENCE_S = 120.0


async def _join(membership: Membership, token: str) -> None:
    """Join, waiting for an API service that is not up yet (it may start after its runners)."""
    deadline = time.monotonic() + JOIN_PATIENCE_S
    while True:
        try:
            await membership.join(token)
            return
        except MembershipError as exc:
            if "Cannot reach" not in str(exc) or time.monotonic() > deadline:
                raise
            log.warning("%s Trying again in %.0f s.", exc, JOIN_RETRY_S)
            await asyncio.sleep(JOIN_RETRY_S)


async def _drain(membership: Membership, manager: JobManager, app: web.Application, timeout_s: float) -> None:
    """Take no new job, let the ones in hand finish and their results be read (bounded by `timeout_s`)."""
    manager.draining = True
    membership.draining = True
    with contextlib.suppress(Exception):
        await membership.heartbeat(manager)  # the dispatchers stop choosing this runner now, not at the next beat
    log.info("draining: %d job(s) running, %d waiting", manager.busy, len(manager.queue))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not (manager.idle and app[STREAMS]["open"] == 0):
        await asyncio.sleep(0.2)
    if not manager.idle:
        log.warning(
            "drain timed out after %.0f s with %d job(s) still running; leaving anyway", timeout_s, manager.busy
        )


async def serve_in_pool(settings: RunnerSettings) -> None:
    """Join the pool, serve jobs, and leave it on SIGTERM. Raises SettingsError or MembershipError."""
    if settings.join_url is None or settings.token_file is None:
        raise SettingsError("To join a pool, give both --join URL (RUNNER_JOIN_URL) and --token-file F.")
    token = read_token(settings.token_file)
    advertise = settings.advertised_url()
    ssl_context = settings.server_ssl_context()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with aiohttp.ClientSession() as session:
        membership = Membership(settings.join_url, settings.name, advertise, session)
        await _join(membership, token)
        app = create_app(settings, secret=membership.secret, membership=membership)
        app_runner = web.AppRunner(app, access_log=None)
        await app_runner.setup()
        try:
            site = web.TCPSite(app_runner, settings.host, settings.port, ssl_context=ssl_context)
            await site.start()
            manager = app[JOBS]
            hardware = await asyncio.to_thread(describe_hardware, manager)
            await membership.register(hardware)
            beats = asyncio.create_task(membership.run(manager), name="heartbeats")
            stopped = asyncio.create_task(stop.wait())
            background = [beats, stopped]
            if settings.canaries:
                canaries = membership.canary_loop(manager, settings.python, settings.canary_interval_s)
                background.append(asyncio.create_task(canaries, name="canaries"))
            await asyncio.wait({beats, stopped}, return_when=asyncio.FIRST_COMPLETED)
            for task in background[2:]:
                task.cancel()
            await _drain(membership, manager, app, settings.drain_timeout_s)
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await membership.leave()
        finally:
            await app_runner.cleanup()
