"""`arena api`: serve the core's HTTP API (runners join and send heartbeats here) and, unless told not to,
dispatch queued jobs to the fleet's runners. Configured from ARENA_API_*, ARENA_FLEET_* and the store's ARENA_*."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

import aiohttp
import asyncpg
from aiohttp import web
from pydantic import ValidationError

from api.app import create_app
from api.settings import ApiSettings
from contract.logs import configure_logging
from contract.runner_client import JobRunner
from core.dispatch import Dispatcher, RunnerPool
from core.errors import UserFacingError
from core.fleet import FleetSettings, sweep_silent
from core.fleet.view import FleetView, RunnerFactory
from core.problems import sync_builtin_problems
from core.store.fleet import LiveRunner
from core.store.outage import STORE_ERRORS
from core.store.pool import open_store
from core.submit.events import case_publisher
from runner.clients.remote import fleet_runner

log = logging.getLogger(__name__)


def load_settings(host: str | None = None, port: int | None = None, dispatch: bool | None = None) -> ApiSettings:
    overrides = {k: v for k, v in (("host", host), ("port", port), ("dispatch", dispatch)) if v is not None}
    try:
        return ApiSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise UserFacingError(f"The API's configuration is wrong ({problems}); see docs/configuration.md.") from exc


def runner_factory(session: aiohttp.ClientSession, fleet: FleetSettings) -> RunnerFactory:
    """Clients of the fleet's runners, over one HTTP session."""

    def make(live: LiveRunner) -> JobRunner:
        return fleet_runner(live, session, ca_file=fleet.runner_ca_file, allow_plain_http=fleet.allow_plain_http)

    return make


async def _sweep_forever(pool: asyncpg.Pool, fleet: FleetSettings) -> None:
    """Without a dispatcher (`--no-dispatch`), this replica still moves silent runners out of their pools."""
    while True:
        try:
            await sweep_silent(pool, fleet)
        except STORE_ERRORS as exc:
            log.warning("fleet sweep: store error (%s: %s); trying again", type(exc).__name__, exc)
        await asyncio.sleep(fleet.refresh_s)


async def serve(settings: ApiSettings, ready: asyncio.Event | None = None) -> None:
    """Serve until SIGTERM or SIGINT; then stop taking requests and let in-flight jobs keep their leases."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with open_store(settings.arena.store) as store, aiohttp.ClientSession() as session:
        if settings.sync_builtin_problems:
            # Before the site listens, so that no submission meets a built-in slug the store does not know yet.
            log.info("registered %d built-in problems", await sync_builtin_problems(store.pool))
        app = create_app(store.pool, settings)
        app_runner = web.AppRunner(app, access_log=None)
        await app_runner.setup()
        site = web.TCPSite(app_runner, settings.host, settings.port)
        try:
            await site.start()
        except OSError as exc:
            await app_runner.cleanup()
            raise UserFacingError(
                f"Cannot listen on {settings.host}:{settings.port} ({exc.strerror or exc}); "
                "choose another with --port or ARENA_API_PORT."
            ) from exc
        tasks: list[asyncio.Task[None]] = []
        publisher = case_publisher(store.pool) if settings.dispatch else None
        if publisher is not None:
            runners = RunnerPool()
            view = FleetView(store.pool, runners, runner_factory(session, settings.fleet), settings.fleet)
            # Each case its runner finishes is told to every replica's event streams (`case` events).
            dispatcher = Dispatcher(store.pool, runners, settings.arena.dispatch, on_event=publisher)
            # The live runners are known before recovery, so that a job in flight at a restart is followed again on
            # its runner rather than run a second time.
            with contextlib.suppress(*STORE_ERRORS):
                await view.refresh()
            tasks += [asyncio.create_task(view.run(), name="fleet-view"), asyncio.create_task(dispatcher.run())]
        else:
            tasks.append(asyncio.create_task(_sweep_forever(store.pool, settings.fleet), name="fleet-sweep"))
        log.info("API on http://%s:%d%s", settings.host, settings.port, " (dispatching)" if settings.dispatch else "")
        if ready is not None:
            ready.set()
        try:
            await stop.wait()
        finally:
            log.info("API stopping")
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if publisher is not None:
                await publisher.close()
            await app_runner.cleanup()


def run(
    host: str | None = None,
    port: int | None = None,
    *,
    dispatch: bool | None = None,
    verbose: bool = False,
    json_logs: bool = False,
) -> int:
    configure_logging(verbose=verbose, json_lines=json_logs)
    settings = load_settings(host, port, dispatch)
    asyncio.run(serve(settings))
    return 0


if __name__ == "__main__":
    sys.exit(run())
