"""Where discord.py connects: Discord itself, or another origin that speaks its API (a fake Discord in tests).

Settings drive this through one value, `ARENA_DISCORD_API_BASE`: an http(s) origin such as
`http://127.0.0.1:8123`, under which the REST API lives at `/api/v10` and the Gateway websocket at `/` (with
a ws/wss scheme). Unset, the bot talks to Discord. The bot's startup calls `configure_discord_base_url(value)`
once, before it logs in; nothing else about the bot changes.

discord.py reads two process-wide class attributes for this, and nothing else:
* `discord.http.Route.BASE`: the prefix of every REST route, interaction webhooks included (each `Route`
  copies it when built, so this must run before the client makes requests);
* `discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`: the websocket URL a `Client` dials first. A plain
  `Client` never asks `GET /gateway/bot` (only `AutoShardedClient` does), and after READY it reconnects to
  READY's `resume_gateway_url`, so setting this default is what moves the Gateway.
Attachment and avatar URLs come in payloads and are fetched as given. `Client(proxy=...)` is no substitute: it
tunnels to discord.com through an HTTP proxy, which a local fake could only serve by terminating TLS.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import discord.gateway
import discord.http
import yarl

log = logging.getLogger(__name__)

ENV_VAR = "ARENA_DISCORD_API_BASE"
DISCORD_REST_BASE = "https://discord.com/api/v10"
DISCORD_GATEWAY = "wss://gateway.discord.gg/"


@dataclass(frozen=True)
class DiscordEndpoints:
    rest_base: str
    gateway: str


def current_discord_endpoints() -> DiscordEndpoints:
    """Where discord.py connects now (to restore it later)."""
    return DiscordEndpoints(discord.http.Route.BASE, str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY))


def set_discord_endpoints(endpoints: DiscordEndpoints) -> None:
    discord.http.Route.BASE = endpoints.rest_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(endpoints.gateway)


def configure_discord_base_url(url: str | None, *, gateway_url: str | None = None) -> DiscordEndpoints:
    """Point discord.py at `url` (an http(s) origin, optionally with a path prefix), or back at Discord if None.

    REST goes to `{url}/api/v10`; the Gateway to `gateway_url`, by default `url` with a ws/wss scheme and a
    trailing `/`. Returns the endpoints now in force. Raises ValueError for a URL that is not http(s).
    """
    if url is None:
        endpoints = DiscordEndpoints(DISCORD_REST_BASE, gateway_url or DISCORD_GATEWAY)
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"{ENV_VAR} must be an http(s) origin like http://127.0.0.1:8123, not {url!r}")
        origin = url.rstrip("/")
        version = discord.http.INTERNAL_API_VERSION
        default_gateway = ("wss" if parts.scheme == "https" else "ws") + origin[len(parts.scheme) :] + "/"
        endpoints = DiscordEndpoints(f"{origin}/api/v{version}", gateway_url or default_gateway)
    set_discord_endpoints(endpoints)
    log.info("discord.py REST base %s, gateway %s", endpoints.rest_base, endpoints.gateway)
    return endpoints
