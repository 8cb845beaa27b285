"""The fake REST API v10: the spec middleware (route check, body parsing, validation) and the simple routes.

Every request under `/api/v10` goes through `spec_middleware`: a route the fake lacks answers 404 and is
recorded; a body that breaks the matching operation's request schema answers Discord's 400 (code 50035) and is
recorded; each JSON response the fake sends is checked against the operation's response schema, and a mismatch
(the fake's own bug) is recorded too. Message routes live in `rest_messages.py`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .payloads import (
    application_payload,
    channel_payload,
    command_payload,
    guild_payload,
    member_payload,
    private_user_payload,
    role_payload,
    user_payload,
)
from .state import Upload
from .validation import OpenAPISpec, discord_error_body

if TYPE_CHECKING:
    from .state import FakeState

log = logging.getLogger(__name__)

API_PREFIX = "/api/v10"
NO_AUTH_PREFIXES = ("/webhooks/", "/interactions/")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class ParsedBody:
    """A request's JSON body (or a multipart body's `payload_json`) and its uploaded `files[n]`."""

    json: Any = None
    uploads: list[Upload] = field(default_factory=list)


# aiohttp >= 3.13 wants typed request keys (and warns on str keys); older versions take a plain str.
BODY_KEY: Any = web.RequestKey("fake_body", ParsedBody) if hasattr(web, "RequestKey") else "fake_body"


def json_response(data: Any, *, status: int = 200) -> web.Response:
    """A JSON response with Discord's exact `Content-Type: application/json`: discord.py parses the body only
    when the header is exactly that (aiohttp's `web.json_response` appends a charset)."""
    return web.Response(body=json.dumps(data).encode(), status=status, content_type="application/json")


def discord_error(status: int, code: int, message: str) -> web.Response:
    return json_response({"code": code, "message": message}, status=status)


def body_of(request: web.Request) -> ParsedBody:
    return request[BODY_KEY]


async def _parse(request: web.Request) -> ParsedBody:
    if request.content_type == "multipart/form-data":
        parsed = ParsedBody()
        reader = await request.multipart()
        async for part in reader:
            name = getattr(part, "name", None) or ""
            if name == "payload_json":
                parsed.json = json.loads(await part.text())  # type: ignore[union-attr]
            elif name.startswith("files[") and name.endswith("]"):
                data = bytes(await part.read())  # type: ignore[union-attr]
                filename = getattr(part, "filename", None) or name
                upload = Upload(int(name[6:-1]), filename, data, part.headers.get("Content-Type"))
                parsed.uploads.append(upload)
            else:
                raise ValueError(f"unexpected multipart field {name!r}")
        return parsed
    raw = await request.read()
    return ParsedBody(json=json.loads(raw) if raw else None)


def spec_middleware(state: FakeState, spec: OpenAPISpec) -> Callable[[web.Request, Handler], Awaitable[Any]]:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(API_PREFIX + "/"):
            return await handler(request)
        method, path = request.method, request.path.removeprefix(API_PREFIX)
        op = spec.match(method, path)
        op_id = op.operation_id if op else None
        if request.match_info.http_exception is not None:
            why = f"Discord's {op_id}, which the fake does not implement" if op else "no such route in Discord's API"
            state.record_violation("unknown-route", method, path, why, op_id)
            return discord_error(404, 0, "404: Not Found")
        if not path.startswith(NO_AUTH_PREFIXES) and request.headers.get("Authorization") != f"Bot {state.token}":
            return discord_error(401, 0, "401: Unauthorized")
        try:
            request[BODY_KEY] = body = await _parse(request)
        except ValueError as exc:
            state.record_violation("request-schema", method, path, f"unreadable body: {exc}", op_id)
            return discord_error(400, 50109, "The request body contains invalid JSON.")
        if op is not None and (body.json is not None or op.request_schemas):
            content_type = request.content_type if request.content_type == "multipart/form-data" else "application/json"
            errors = spec.validate_request(op, content_type, body.json)
            if errors:
                state.record_violation("request-schema", method, path, "; ".join(map(str, errors)), op_id)
                return json_response(discord_error_body(errors), status=400)
        response = await handler(request)
        if op is not None and isinstance(response, web.Response) and response.content_type == "application/json":
            errors = spec.validate_response(op, response.status, json.loads(response.body or b"null"))  # type: ignore[arg-type]
            if errors:
                message = f"the fake answered {response.status} against the spec: " + "; ".join(map(str, errors))
                state.record_violation("response-schema", method, path, message, op_id)
        return response

    return middleware


class CoreRoutes:
    """Identity, gateway discovery, commands, guild and channel reads, DMs and the CDN."""

    def __init__(self, state: FakeState) -> None:
        self.state = state

    def routes(self) -> list[web.RouteDef]:
        api = API_PREFIX
        return [
            web.get(f"{api}/users/@me", self.get_me),
            web.post(f"{api}/users/@me/channels", self.create_dm),
            web.get(f"{api}/users/{{user_id}}", self.get_user),
            web.get(f"{api}/applications/@me", self.get_application),
            web.get(f"{api}/oauth2/applications/@me", self.get_application),
            web.get(f"{api}/gateway", self.get_gateway),
            web.get(f"{api}/gateway/bot", self.get_gateway_bot),
            web.get(f"{api}/applications/{{app_id}}/commands", self.list_commands),
            web.put(f"{api}/applications/{{app_id}}/commands", self.overwrite_commands),
            web.get(f"{api}/applications/{{app_id}}/guilds/{{guild_id}}/commands", self.list_commands),
            web.put(f"{api}/applications/{{app_id}}/guilds/{{guild_id}}/commands", self.overwrite_commands),
            web.get(f"{api}/guilds/{{guild_id}}", self.get_guild),
            web.get(f"{api}/guilds/{{guild_id}}/channels", self.get_guild_channels),
            web.get(f"{api}/guilds/{{guild_id}}/roles", self.get_guild_roles),
            web.get(f"{api}/guilds/{{guild_id}}/members/{{user_id}}", self.get_member),
            web.get(f"{api}/channels/{{channel_id}}", self.get_channel),
            web.get("/attachments/{file_id}/{filename}", self.get_attachment),
        ]

    async def get_me(self, request: web.Request) -> web.Response:
        return json_response(private_user_payload(self.state.bot_user))

    async def get_user(self, request: web.Request) -> web.Response:
        user = self.state.user(request.match_info["user_id"])
        if user is None:
            return discord_error(404, 10013, "Unknown User")
        return json_response(user_payload(user))

    async def create_dm(self, request: web.Request) -> web.Response:
        user = self.state.user(str((body_of(request).json or {}).get("recipient_id")))
        if user is None:
            return discord_error(404, 10013, "Unknown User")
        return json_response(channel_payload(self.state.dm_channel(user)))

    async def get_application(self, request: web.Request) -> web.Response:
        state = self.state
        return json_response(
            application_payload(state.application_id, state.bot_user, state.owner, state.application_flags)
        )

    async def get_gateway(self, request: web.Request) -> web.Response:
        return json_response({"url": self.state.gateway_url})

    async def get_gateway_bot(self, request: web.Request) -> web.Response:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return json_response({"url": self.state.gateway_url, "shards": 1, "session_start_limit": limit})

    def _command_scope(self, request: web.Request) -> tuple[str | None, web.Response | None]:
        if request.match_info["app_id"] != self.state.application_id:
            return None, discord_error(403, 50001, "Missing Access")
        guild_id = request.match_info.get("guild_id")
        if guild_id is not None and guild_id != self.state.guild.id:
            return None, discord_error(403, 50001, "Missing Access")
        return guild_id, None

    async def list_commands(self, request: web.Request) -> web.Response:
        guild_id, error = self._command_scope(request)
        return error or json_response(self.state.commands.get(guild_id, []))

    async def overwrite_commands(self, request: web.Request) -> web.Response:
        """Bulk overwrite: a command keeps its id when one of the same name and type existed before."""
        guild_id, error = self._command_scope(request)
        if error is not None:
            return error
        state = self.state
        previous = {(c["name"], c.get("type", 1)): c["id"] for c in state.commands.get(guild_id, [])}
        stored = []
        for entry in body_of(request).json or []:
            command_id = previous.get((entry["name"], entry.get("type") or 1)) or state.ids.next()
            app_id = state.application_id
            stored.append(
                command_payload(
                    entry, command_id=command_id, app_id=app_id, guild_id=guild_id, version=state.ids.next()
                )
            )
        state.commands[guild_id] = stored
        log.info("fake Discord: %d commands synced to %s", len(stored), f"guild {guild_id}" if guild_id else "global")
        state.notify()
        return json_response(stored)

    def _guild(self, request: web.Request) -> web.Response | None:
        if request.match_info["guild_id"] != self.state.guild.id:
            return discord_error(404, 10004, "Unknown Guild")
        return None

    async def get_guild(self, request: web.Request) -> web.Response:
        with_counts = request.query.get("with_counts", "").lower() in ("1", "true")
        return self._guild(request) or json_response(guild_payload(self.state.guild, with_counts=with_counts))

    async def get_guild_channels(self, request: web.Request) -> web.Response:
        return self._guild(request) or json_response([channel_payload(c) for c in self.state.guild.channels])

    async def get_guild_roles(self, request: web.Request) -> web.Response:
        return self._guild(request) or json_response([role_payload(r) for r in self.state.guild.roles])

    async def get_member(self, request: web.Request) -> web.Response:
        error = self._guild(request)
        user = self.state.user(request.match_info["user_id"])
        if error is None and user is None:
            error = discord_error(404, 10007, "Unknown Member")
        return error or json_response(member_payload(self.state.guild, user))  # type: ignore[arg-type]

    async def get_channel(self, request: web.Request) -> web.Response:
        channel = self.state.channel(request.match_info["channel_id"])
        if channel is None:
            return discord_error(404, 10003, "Unknown Channel")
        return json_response(channel_payload(channel))

    async def get_attachment(self, request: web.Request) -> web.Response:
        stored = self.state.files.get(request.match_info["file_id"])
        if stored is None or stored.filename != request.match_info["filename"]:
            raise web.HTTPNotFound()
        return web.Response(body=stored.data, content_type=stored.content_type or "application/octet-stream")
