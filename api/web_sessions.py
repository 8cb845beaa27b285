"""Web sessions: where the web's "Sign in with Discord" ends, and its sign-out.

- `POST /v1/sessions` `{"discord_access_token": ..., "days": 7}`: the web exchanged the user's authorization code
  for a Discord access token; this service does not take the web's word for whose it is. It asks Discord itself
  (`GET /api/v10/oauth2/@me`), and refuses a token minted for another application (a site that signs its users in
  with Discord must not be able to replay their tokens here) or one without the `identify` scope. It then makes
  the user's personal token (`core/tokens.py`, scopes read and submit, named `web sign-in`, living `days`) for the
  users row keyed `discord:<id>`: the row the bot's commands use, so quotas, bans and ratings are one. 201 with
  the token, shown this once.
- `DELETE /v1/sessions/current` (`Authorization: Bearer <that token>`): sign-out; the token is revoked. 204.

A Discord token that Discord does not know, or that is another application's, counts as a failed authentication
for the caller's address (`api/user_auth.py`'s bucket), and it travels over https:// only, as personal tokens do.
`ARENA_API_DISCORD_CLIENT_ID` unset: web sign-in is off, and `POST /v1/sessions` says so (404).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any, Final

import aiohttp
import asyncpg
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.problems_json import ProblemError, openapi_problem_responses
from api.settings import ApiSettings
from api.user_auth import LIMITER, authenticate, client_of
from core.members import PLATFORM
from core.store import tokens as token_store
from core.tokens import create_token, list_tokens

log = logging.getLogger(__name__)

WEB_TOKEN_NAME: Final = "web sign-in"
# A user signed in on more browsers than this loses the oldest sign-in: their personal tokens are capped in all.
MAX_WEB_SESSIONS: Final = 10
DISCORD_TIMEOUT_S: Final = 10.0
# Discord's REST API version, the one the vendored OpenAPI document describes.
DISCORD_API: Final = "/api/v10"
IDENTIFY: Final = "identify"

_POOL = web.AppKey("web_sessions_pool", asyncpg.Pool)
_SETTINGS = web.AppKey("web_sessions_settings", ApiSettings)
_HTTP = web.AppKey("web_sessions_http", aiohttp.ClientSession)


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WebSessionRequest(_Wire):
    """POST /v1/sessions: a Discord OAuth2 access token of the arena's application, with scope `identify`."""

    discord_access_token: str = Field(min_length=1, max_length=512)
    days: int = Field(7, ge=1, le=365, description="how long the session lasts (at most the service's maximum)")


class WebSessionUser(_Wire):
    id: int = Field(description="the arena's user id (the same as the user's Discord runs)")
    discord_id: str = Field(description="the user's Discord id (a snowflake)")
    name: str = Field(description="the user's name as shown on the boards")


class WebSession(_Wire):
    """201 to POST /v1/sessions: a personal token for the web to act as the user, shown this once."""

    token: str = Field(description="arena_pat_...: send it as `Authorization: Bearer`")
    token_id: int
    expires_at: datetime
    user: WebSessionUser


MODELS: list[type[BaseModel]] = [WebSessionRequest, WebSession, WebSessionUser]


class _DiscordApplication(BaseModel):
    id: str


class _DiscordUser(BaseModel):
    id: str
    username: str
    global_name: str | None = None


class _DiscordAuthorization(BaseModel):
    """What Discord's `GET /oauth2/@me` answers about the token it was called with (the fields used here)."""

    application: _DiscordApplication
    scopes: list[str]
    user: _DiscordUser | None = None


async def _discord_authorization(request: web.Request, access_token: str) -> _DiscordAuthorization:
    """Who Discord says the token belongs to, and which application it was issued to."""
    url = request.app[_SETTINGS].discord_url.rstrip("/") + DISCORD_API + "/oauth2/@me"
    try:
        async with request.app[_HTTP].get(
            url,
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=aiohttp.ClientTimeout(total=DISCORD_TIMEOUT_S),
        ) as response:
            if response.status == 401:
                raise _refused(
                    request,
                    "token_invalid",
                    "Discord does not know this access token (expired or revoked); sign in again.",
                )
            if response.status != 200:
                log.warning("Discord answered %d to GET /oauth2/@me", response.status)
                raise ProblemError("unavailable", "Discord could not tell whose this token is; try again shortly.")
            body = await response.read()
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("GET %s failed: %s", url, exc)
        raise ProblemError("unavailable", "Discord cannot be reached from the arena; try again shortly.") from None
    try:
        return _DiscordAuthorization.model_validate_json(body)
    except ValidationError:
        log.warning("Discord's GET /oauth2/@me answer was not understood: %.300r", body)
        raise ProblemError("unavailable", "Discord's answer was not understood; try again shortly.") from None


def _refused(request: web.Request, code: str, detail: str) -> ProblemError:
    """A refusal of the caller's Discord token, counted against their address as a failed authentication."""
    request.app[LIMITER].failed(client_of(request, request.app[_SETTINGS]).address)
    return ProblemError(code, detail)


def _check_transport(request: web.Request) -> None:
    """A Discord token is a credential: https:// or loopback only, and not from an address that failed too often."""
    settings = request.app[_SETTINGS]
    client = client_of(request, settings)
    if not (client.secure or client.loopback or settings.public_allow_plain_http):
        raise ProblemError("https_required", "Tokens travel over https:// only; call the API at its https:// address.")
    wait_s = request.app[LIMITER].refused_for_s(client.address)
    if wait_s is not None:
        raise ProblemError(
            "auth_rate_limited",
            f"Too many failed authentications from this address; try again in {math.ceil(wait_s)} s.",
            retry_after_s=wait_s,
        )


async def _make_room(pool: asyncpg.Pool, external_id: str) -> None:
    """Revoke the user's oldest web sign-ins beyond MAX_WEB_SESSIONS - 1, so that a new one fits."""
    web_tokens = [t for t in await list_tokens(pool, external_id) if t.name == WEB_TOKEN_NAME]
    for old in web_tokens[MAX_WEB_SESSIONS - 1 :]:  # newest first
        await token_store.revoke_token(pool, old.user_id, old.id)


async def create_session(request: web.Request) -> web.Response:
    settings = request.app[_SETTINGS]
    if not settings.discord_client_id:
        raise ProblemError(
            "not_found",
            "Signing in with Discord is off on this API: its operator has not set ARENA_API_DISCORD_CLIENT_ID.",
        )
    _check_transport(request)
    asked = WebSessionRequest.model_validate_json(await request.read())
    found = await _discord_authorization(request, asked.discord_access_token)
    if found.application.id != settings.discord_client_id:
        log.info("a Discord token of application %s was refused", found.application.id[:20])
        raise _refused(
            request,
            "forbidden",
            "This Discord token was issued to another application; sign in through the arena's web.",
        )
    if IDENTIFY not in found.scopes or found.user is None:
        raise ProblemError("insufficient_scope", f"This Discord token lacks the `{IDENTIFY}` scope; sign in again.")
    discord_id = found.user.id
    if not (discord_id.isascii() and discord_id.isdigit() and len(discord_id) <= 20):
        raise ProblemError("unavailable", "Discord's answer named no valid user id; try again shortly.")
    external_id = f"{PLATFORM}:{discord_id}"
    # The name the bot records too (discord.py's display_name): the global name, else the user name.
    name = found.user.global_name or found.user.username
    await _make_room(request.app[_POOL], external_id)
    days = min(asked.days, settings.web_session_max_days)
    made = await create_token(
        request.app[_POOL], external_id, name, WEB_TOKEN_NAME, scopes="read,submit", lifetime=timedelta(days=days)
    )
    log.info("user %d signed in to the web (token %d)", made.row.user_id, made.row.id)
    answer = WebSession(
        token=made.token,
        token_id=made.row.id,
        expires_at=made.row.expires_at,
        user=WebSessionUser(id=made.row.user_id, discord_id=discord_id, name=name[:100] or external_id),
    )
    return web.json_response(text=answer.model_dump_json(), status=201, headers={"Cache-Control": "no-store"})


async def delete_current_session(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    await token_store.revoke_token(request.app[_POOL], user.user_id, user.token_id)
    log.info("user %d signed out (token %d revoked)", user.user_id, user.token_id)
    return web.Response(status=204, headers={"Cache-Control": "no-store"})


def register(app: web.Application, pool: asyncpg.Pool, settings: ApiSettings) -> None:
    """Add the routes, and the HTTP client that asks Discord (opened when the app starts)."""
    app[_POOL] = pool
    app[_SETTINGS] = settings

    async def discord_client(app: web.Application) -> AsyncIterator[None]:
        async with aiohttp.ClientSession() as http:
            app[_HTTP] = http
            yield

    app.cleanup_ctx.append(discord_client)
    app.router.add_post("/v1/sessions", create_session)
    app.router.add_delete("/v1/sessions/current", delete_current_session)


def openapi_paths() -> dict[str, Any]:
    return {
        "/v1/sessions": {
            "post": {
                "summary": "Sign in to the web: a Discord access token of the arena's application, exchanged for a "
                "personal token (scopes read and submit) of the same user as their Discord runs",
                "security": [],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebSessionRequest"}}},
                },
                "responses": {
                    "201": {
                        "description": "signed in; the token is shown this once",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebSession"}}},
                    },
                    **openapi_problem_responses(400, 401, 403, 404, 422, 429, 503),
                },
            }
        },
        "/v1/sessions/current": {
            "delete": {
                "summary": "Sign out: revoke the token this request carries",
                "security": [{"bearer": []}],
                "responses": {
                    "204": {"description": "signed out; the token no longer works"},
                    **openapi_problem_responses(401, 403, 429, 503),
                },
            }
        },
    }
