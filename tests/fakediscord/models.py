"""The fake's world and its records: users, roles, channels, one guild; messages, interactions and violations.

Entities are plain mutable dataclasses the tests may read. Records are what the bot did, kept in the order it
happened, with every version of every message.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

log = logging.getLogger(__name__)

DISCORD_EPOCH_MS = 1_420_070_400_000

# Permission bits (https://discord.com/developers/docs/topics/permissions).
ADD_REACTIONS = 1 << 6
ADMINISTRATOR = 1 << 3
MANAGE_GUILD = 1 << 5
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
MANAGE_MESSAGES = 1 << 13
EMBED_LINKS = 1 << 14
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
USE_EXTERNAL_EMOJIS = 1 << 18
USE_APPLICATION_COMMANDS = 1 << 31
SEND_MESSAGES_IN_THREADS = 1 << 38
ALL_PERMISSIONS = (1 << 51) - 1
EVERYONE_PERMISSIONS = (
    VIEW_CHANNEL
    | SEND_MESSAGES
    | EMBED_LINKS
    | ATTACH_FILES
    | READ_MESSAGE_HISTORY
    | ADD_REACTIONS
    | USE_EXTERNAL_EMOJIS
    | USE_APPLICATION_COMMANDS
    | SEND_MESSAGES_IN_THREADS
)
BOT_PERMISSIONS = EVERYONE_PERMISSIONS | MANAGE_MESSAGES

# Message flags.
EPHEMERAL = 1 << 6
LOADING = 1 << 7

GUILD_TEXT = 0
DM = 1


def iso(moment: datetime) -> str:
    """A timestamp as Discord writes it: ISO 8601 with microseconds and an explicit UTC offset."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def now_iso() -> str:
    return iso(datetime.now(UTC))


class Snowflakes:
    """Increasing Discord ids: milliseconds since the Discord epoch in the top bits, as real ids are."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> str:
        stamp = (time.time_ns() // 1_000_000 - DISCORD_EPOCH_MS) << 22
        self._last = max(stamp, self._last + 1)
        return str(self._last)


@dataclass
class FakeUser:
    """A Discord user; in the guild as a member with `role_ids` (the @everyone role is implied)."""

    id: str
    username: str
    global_name: str | None = None
    bot: bool = False
    role_ids: list[str] = field(default_factory=list)
    nick: str | None = None
    joined_at: str = field(default_factory=now_iso)

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"


@dataclass
class FakeRole:
    id: str
    name: str
    permissions: int = 0
    position: int = 0
    color: int = 0
    bot_id: str | None = None  # set on the bot's managed role

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"


@dataclass
class FakeChannel:
    """A guild text channel, or a DM channel (type 1) with its one recipient."""

    id: str
    name: str
    type: int = GUILD_TEXT
    position: int = 0
    topic: str | None = None
    guild_id: str | None = None
    recipient: FakeUser | None = None

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"


@dataclass
class FakeGuild:
    """The one guild the bot is in. The @everyone role's id is the guild's id, as in Discord."""

    id: str
    name: str
    owner_id: str
    roles: list[FakeRole] = field(default_factory=list)
    channels: list[FakeChannel] = field(default_factory=list)
    members: dict[str, FakeUser] = field(default_factory=dict)
    locale: str = "en-US"

    def role(self, name: str) -> FakeRole:
        for role in self.roles:
            if role.name == name:
                return role
        raise KeyError(f"no role named {name!r} (roles: {[r.name for r in self.roles]})")

    def channel(self, name: str) -> FakeChannel:
        for channel in self.channels:
            if channel.name == name:
                return channel
        raise KeyError(f"no channel named {name!r} (channels: {[c.name for c in self.channels]})")

    def channel_by_id(self, channel_id: str) -> FakeChannel | None:
        return next((c for c in self.channels if c.id == channel_id), None)

    def permissions_of(self, user: FakeUser) -> int:
        """Guild-level permissions: @everyone's and the member's roles' bits; the owner and admins have all."""
        if user.id == self.owner_id:
            return ALL_PERMISSIONS
        bits = 0
        for role in self.roles:
            if role.id == self.id or role.id in user.role_ids:
                bits |= role.permissions
        return ALL_PERMISSIONS if bits & ADMINISTRATOR else bits


@dataclass
class StoredFile:
    """A file on the fake's CDN: uploaded by a test user (an option) or by the bot (a message attachment)."""

    id: str
    filename: str
    data: bytes = field(repr=False)
    content_type: str | None
    url: str
    description: str | None = None

    @property
    def size(self) -> int:
        return len(self.data)


MessageSource = Literal["channel", "response", "followup"]


@dataclass
class RecordedMessage:
    """A message the bot created, at its latest state; `history` keeps every state, the first one included."""

    id: str
    channel_id: str
    source: MessageSource
    interaction_id: str | None
    payload: dict[str, Any]
    files: list[StoredFile] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list, repr=False)
    deleted: bool = False

    @property
    def content(self) -> str:
        return str(self.payload.get("content", ""))

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.payload.get("embeds", []))

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.payload.get("components", []))

    @property
    def flags(self) -> int:
        return int(self.payload.get("flags", 0))

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        """True while the message is a deferred response's "thinking..." placeholder."""
        return bool(self.flags & LOADING)

    @property
    def edits(self) -> int:
        return len(self.history) - 1

    def buttons(self) -> list[dict[str, Any]]:
        """Every button of the message, depth first (custom_id, label, style, disabled...)."""
        return [c for c in walk_components(self.components) if c.get("type") == 2]

    def file(self, filename: str) -> bytes:
        for stored in self.files:
            if stored.filename == filename:
                return stored.data
        raise KeyError(f"message {self.id} has no attachment {filename!r} (has {[f.filename for f in self.files]})")

    def summary(self) -> str:
        titles = [e.get("title") for e in self.embeds]
        names = [f.filename for f in self.files]
        state = " deleted" if self.deleted else (" loading" if self.loading else "")
        return f"{self.source} {self.id}{state}: content={self.content!r} embeds={titles} files={names}"


def walk_components(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every component, nested ones included (rows, containers, section accessories), depth first."""
    found: list[dict[str, Any]] = []
    for component in components:
        found.append(component)
        found.extend(walk_components(component.get("components", [])))
        if isinstance(component.get("accessory"), dict):
            found.append(component["accessory"])
    return found


@dataclass
class InteractionRecord:
    """One interaction the fake sent, and every callback, original response and follow-up the bot made for it."""

    id: str
    token: str
    type: int
    name: str  # the command path ("submit", "admin problem add") or the component's custom_id
    user: FakeUser
    channel_id: str
    payload: dict[str, Any] = field(repr=False)
    component_message_id: str | None = None
    trigger_id: str | None = None  # for a modal submission: the interaction that opened the modal
    callbacks: list[dict[str, Any]] = field(default_factory=list)
    original_message_id: str | None = None
    followup_ids: list[str] = field(default_factory=list)

    @property
    def acknowledged(self) -> bool:
        return bool(self.callbacks)

    @property
    def response_type(self) -> int | None:
        return self.callbacks[0]["type"] if self.callbacks else None

    @property
    def choices(self) -> list[dict[str, Any]] | None:
        """The autocomplete choices the bot answered with, if it answered an autocomplete."""
        for body in self.callbacks:
            if body.get("type") == 8:
                return list((body.get("data") or {}).get("choices", []))
        return None


ViolationKind = Literal["request-schema", "response-schema", "unknown-route", "protocol", "gateway"]


@dataclass(frozen=True)
class Violation:
    """Something Discord would reject or that the fake got wrong; tests assert there are none."""

    kind: ViolationKind
    method: str
    path: str
    message: str
    operation_id: str | None = None

    def __str__(self) -> str:
        operation = f" ({self.operation_id})" if self.operation_id else ""
        return f"{self.kind}: {self.method} {self.path}{operation}: {self.message}"
