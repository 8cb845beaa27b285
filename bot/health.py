"""The bot's probes for machines (a load balancer, Kubernetes): a small aiohttp listener of its own.

`GET /healthz` answers 200 `ok` while the process's event loop answers; `GET /readyz` answers 200 `ok` while the bot
is connected to Discord's gateway (`is_ready()`, its websocket open) and the store answers a trivial query, else 503
`not ready`. Neither needs authentication, so neither says anything more: no version, no guild, no count, no error
text. The bot has no HTTP server of its own, hence a listener on `ARENA_BOT_HEALTH_HOST:ARENA_BOT_HEALTH_PORT`
(127.0.0.1:8081 by default, 0.0.0.0 in a pod; port 0 turns it off).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import discord
from aiohttp import web

from core.errors import KernelArenaError
from core.store.pool import ping

log = logging.getLogger(__name__)

# A probe that waits longer than this is answered `not ready`: a store this slow cannot serve a command either.
READY_TIMEOUT_S = 2.0

Readiness = Callable[[], Awaitable[bool]]


class HealthListenerError(KernelArenaError):
    """The health listener cannot listen where it is told to; the message says which setting to change."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _probe(ok: bool) -> web.Response:
    return web.Response(
        text="ok" if ok else "not ready", status=200 if ok else 503, headers={"Cache-Control": "no-store"}
    )


def health_app(readiness: Readiness) -> web.Application:
    """The two probes; `readiness` answers whether the bot takes commands now."""

    async def healthz(request: web.Request) -> web.Response:
        return _probe(True)

    async def readyz(request: web.Request) -> web.Response:
        try:
            ready = await readiness()
        except Exception:
            # A probe answers, whatever fails behind it; the failure itself goes to the log, never to the caller.
            log.warning("readyz: the readiness check failed", exc_info=True)
            ready = False
        return _probe(ready)

    app = web.Application()
    app.add_routes([web.get("/healthz", healthz), web.get("/readyz", readyz)])
    return app


def bot_readiness(bot: discord.Client, timeout_s: float = READY_TIMEOUT_S) -> Readiness:
    """Whether `bot` takes commands now: connected to the gateway, and its store (`bot.pool`, which the bot's
    `setup_hook` opens) answering `SELECT 1` within `timeout_s`."""

    async def ready() -> bool:
        if bot.is_closed() or not bot.is_ready() or bot.ws is None or not bot.ws.open:
            return False  # is_ready() stays true while discord.py reconnects; the open websocket says it is back
        pool = getattr(bot, "pool", None)
        if pool is None:
            return False
        try:
            async with asyncio.timeout(timeout_s):
                return await ping(pool, timeout_s)
        except TimeoutError:
            return False

    return ready


@asynccontextmanager
async def health_listener(host: str, port: int, readiness: Readiness) -> AsyncIterator[str | None]:
    """Serve the probes on `host:port` for the block, and yield their base URL; with port 0, serve nothing and
    yield None. Raises HealthListenerError when the address cannot be bound."""
    if port == 0:
        log.info("the health listener is off (ARENA_BOT_HEALTH_PORT=0)")
        yield None
        return
    runner = web.AppRunner(health_app(readiness), access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            raise HealthListenerError(
                f"The bot's health listener cannot listen on {host}:{port} ({exc.strerror or exc}). Choose another "
                "port with ARENA_BOT_HEALTH_PORT (0 turns the listener off), or an address of this machine with "
                "ARENA_BOT_HEALTH_HOST."
            ) from exc
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        log.info("health probes on %s/healthz and %s/readyz", url, url)
        yield url
    finally:
        await runner.cleanup()
