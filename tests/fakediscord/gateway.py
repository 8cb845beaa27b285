"""The fake Gateway (v10, JSON): HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeats, RESUME, member chunks.

Frames are text, unless the client asked for `compress=zlib-stream` (discord.py does, when `zstandard` is not
installed): then each payload is deflated into one shared zlib stream and ends with a Z_SYNC_FLUSH, as Discord
does. Any other compression request (e.g. `zstd-stream`) gets plain text frames, which discord.py also reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from .models import DM, RecordedMessage, now_iso
from .payloads import guild_create_payload, member_payload, private_user_payload

if TYPE_CHECKING:
    from .state import FakeState

log = logging.getLogger(__name__)

DISPATCH, HEARTBEAT, IDENTIFY, PRESENCE_UPDATE, VOICE_STATE_UPDATE = 0, 1, 2, 3, 4
RESUME, RECONNECT, REQUEST_GUILD_MEMBERS, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 6, 7, 8, 9, 10, 11
CLOSE_UNKNOWN_OPCODE, CLOSE_DECODE_ERROR, CLOSE_NOT_AUTHENTICATED, CLOSE_AUTHENTICATION_FAILED = 4001, 4002, 4003, 4004
CLOSE_ALREADY_AUTHENTICATED = 4005
SEND_TIMEOUT_S = 30.0
GUILD_MESSAGES_INTENT = 1 << 9
DIRECT_MESSAGES_INTENT = 1 << 12


@dataclass
class GatewaySession:
    """A session survives its connection: RESUME replays the dispatches the client missed."""

    id: str
    intents: int
    sent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sequence(self) -> int:
        return len(self.sent)


class GatewayConnection:
    """One websocket from the bot. Dispatches go out with increasing sequence numbers."""

    def __init__(self, state: FakeState, ws: web.WebSocketResponse, *, compress: bool, heartbeat_ms: int) -> None:
        self.state = state
        self.ws = ws
        self.heartbeat_ms = heartbeat_ms
        self.session: GatewaySession | None = None
        self.ready = asyncio.Event()  # set once READY and GUILD_CREATE are out
        self._deflate = zlib.compressobj() if compress else None
        self._send_lock = asyncio.Lock()

    async def send(self, payload: dict[str, Any]) -> None:
        text = json.dumps(payload, separators=(",", ":"))
        async with self._send_lock:
            if self.ws.closed:
                raise ConnectionError("the bot's gateway connection is closed")
            if self._deflate is not None:
                data = self._deflate.compress(text.encode()) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
                await asyncio.wait_for(self.ws.send_bytes(data), SEND_TIMEOUT_S)
            else:
                await asyncio.wait_for(self.ws.send_str(text), SEND_TIMEOUT_S)

    async def dispatch(self, event: str, data: dict[str, Any]) -> int:
        """Send one DISPATCH; returns its sequence number."""
        if self.session is None:
            raise ConnectionError("the bot has not identified on the gateway yet")
        frame = {"op": DISPATCH, "t": event, "s": self.session.sequence + 1, "d": data}
        self.session.sent.append(frame)
        await self.send(frame)
        log.debug("gateway: dispatched %s (seq %d)", event, frame["s"])
        return int(frame["s"])

    async def run(self, sessions: dict[str, GatewaySession]) -> None:
        await self.send({"op": HELLO, "d": {"heartbeat_interval": self.heartbeat_ms}})
        async for msg in self.ws:
            if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                break
            try:
                frame = json.loads(msg.data)
                op, data = frame["op"], frame.get("d")
            except (ValueError, KeyError, TypeError):
                self._violation(f"undecodable frame {str(msg.data)[:200]!r}")
                await self.ws.close(code=CLOSE_DECODE_ERROR, message=b"Error while decoding payload.")
                return
            await self._handle(op, data, sessions)

    async def _handle(self, op: int, data: Any, sessions: dict[str, GatewaySession]) -> None:
        if op == HEARTBEAT:
            await self.send({"op": HEARTBEAT_ACK})
        elif op == IDENTIFY:
            await self._identify(data, sessions)
        elif op == RESUME:
            await self._resume(data, sessions)
        elif self.session is None:
            self._violation(f"op {op} before IDENTIFY")
            await self.ws.close(code=CLOSE_NOT_AUTHENTICATED, message=b"Not authenticated.")
        elif op == REQUEST_GUILD_MEMBERS:
            await self._members_chunk(data)
        elif op in (PRESENCE_UPDATE, VOICE_STATE_UPDATE):
            log.debug("gateway: op %d ignored", op)
        else:
            self._violation(f"unknown opcode {op}")
            await self.ws.close(code=CLOSE_UNKNOWN_OPCODE, message=b"Unknown opcode.")

    async def _identify(self, data: Any, sessions: dict[str, GatewaySession]) -> None:
        if self.session is not None:
            await self.ws.close(code=CLOSE_ALREADY_AUTHENTICATED, message=b"Already authenticated.")
            return
        missing = [key for key in ("token", "properties", "intents") if key not in (data or {})]
        if missing:
            self._violation(f"IDENTIFY without {missing}")
        if (data or {}).get("token") != self.state.token:
            await self.ws.close(code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        self.session = GatewaySession(id=secrets.token_hex(16), intents=int(data.get("intents", 0)))
        sessions[self.session.id] = self.session
        state = self.state
        ready = {
            "v": 10,
            "user": private_user_payload(state.bot_user),
            "application": {"id": state.application_id, "flags": state.application_flags},
            "guilds": [{"id": state.guild.id, "unavailable": True}],
            "session_id": self.session.id,
            "session_type": "normal",
            "resume_gateway_url": state.gateway_url,
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "geo_ordered_rtc_regions": [],
            "guild_join_requests": [],
            "user_settings": {},
            "auth_session_id_hash": secrets.token_hex(8),
            "_trace": ["fake-discord"],
        }
        if "shard" in data:
            ready["shard"] = data["shard"]
        await self.dispatch("READY", ready)
        await self.dispatch("GUILD_CREATE", guild_create_payload(state.guild, joined_at=now_iso()))
        self.ready.set()
        self.state.notify()

    async def _resume(self, data: Any, sessions: dict[str, GatewaySession]) -> None:
        data = data or {}
        session = sessions.get(str(data.get("session_id")))
        if session is None or data.get("token") != self.state.token:
            await self.send({"op": INVALID_SESSION, "d": False})
            return
        self.session = session
        seq = int(data.get("seq") or 0)
        for frame in session.sent[seq:]:
            await self.send(frame)
        await self.dispatch("RESUMED", {"_trace": ["fake-discord"]})
        self.ready.set()
        self.state.notify()
        log.debug("gateway: resumed session %s from seq %d", session.id, seq)

    async def _members_chunk(self, data: Any) -> None:
        data = data or {}
        query = str(data.get("query") or "").lower()
        user_ids = {str(u) for u in (data.get("user_ids") or [])}
        guild = self.state.guild
        users = [
            u for u in guild.members.values() if (not user_ids or u.id in user_ids) and u.username.startswith(query)
        ]
        limit = int(data.get("limit") or 0)
        users = users[:limit] if limit else users
        chunk: dict[str, Any] = {
            "guild_id": guild.id,
            "members": [member_payload(guild, u) for u in users],
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": sorted(user_ids - {u.id for u in users}),
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        await self.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    def _violation(self, message: str) -> None:
        self.state.record_violation("gateway", "WS", "/", message)


class GatewayHub:
    """The websocket endpoint: its connections (the live one is the newest that is ready) and sessions."""

    def __init__(self, state: FakeState, *, heartbeat_ms: int) -> None:
        self.state = state
        self.heartbeat_ms = heartbeat_ms
        self.sessions: dict[str, GatewaySession] = {}
        self.connections: list[GatewayConnection] = []

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        if request.query.get("v", "10") != "10" or request.query.get("encoding", "json") != "json":
            self.state.record_violation("gateway", "WS", "/", f"unsupported gateway query {dict(request.query)}")
            await ws.close(code=4012, message=b"Invalid API version or encoding.")
            return ws
        compress = request.query.get("compress") == "zlib-stream"
        connection = GatewayConnection(self.state, ws, compress=compress, heartbeat_ms=self.heartbeat_ms)
        self.connections.append(connection)
        log.debug("gateway: connection opened (compress=%s)", compress)
        try:
            await connection.run(self.sessions)
        finally:
            self.connections.remove(connection)
            log.debug("gateway: connection closed (code %s)", ws.close_code)
        return ws

    async def close(self) -> None:
        for connection in list(self.connections):
            await connection.ws.close(code=1001, message=b"fake Discord is shutting down")

    def live(self) -> GatewayConnection | None:
        ready = [c for c in self.connections if c.ready.is_set() and not c.ws.closed]
        return ready[-1] if ready else None

    async def dispatch(self, event: str, data: dict[str, Any]) -> int:
        connection = self.live()
        if connection is None:
            raise RuntimeError("the bot is not connected to the fake gateway")
        return await connection.dispatch(event, data)

    async def request_reconnect(self, *, timeout: float) -> None:
        old = self.live()
        if old is None:
            raise RuntimeError("the bot is not connected to the fake gateway")
        await old.send({"op": RECONNECT, "d": None})

        def resumed() -> GatewayConnection | None:
            live = self.live()
            return live if live is not None and live is not old else None

        await self.state.wait_until(resumed, timeout=timeout, what="the bot to resume after RECONNECT")

    async def message_event(self, event: str, message: RecordedMessage) -> None:
        """MESSAGE_CREATE/UPDATE/DELETE for a bot's message, when its intents ask for them (as Discord echoes)."""
        connection = self.live()
        channel = self.state.channel(message.channel_id)
        if connection is None or connection.session is None or channel is None:
            return
        intent = DIRECT_MESSAGES_INTENT if channel.type == DM else GUILD_MESSAGES_INTENT
        if not connection.session.intents & intent:
            return
        guild, bot = self.state.guild, self.state.bot_user
        data: dict[str, Any] = {"id": message.id, "channel_id": message.channel_id}
        if event != "MESSAGE_DELETE":
            data = dict(message.payload)
            if channel.type != DM:
                data["member"] = {k: v for k, v in member_payload(guild, bot).items() if k != "user"}
        if channel.type != DM:
            data["guild_id"] = guild.id
        try:
            await connection.dispatch(event, data)
        except (ConnectionError, TimeoutError) as exc:
            log.debug("gateway: %s for message %s not delivered: %s", event, message.id, exc)
