"""What the fake knows and what the bot did: the guild, the synced commands, messages, interactions, files.

`FakeState` has no I/O. The REST handlers change it; tests read it and wait on it (`wait_until`), so a test
never sleeps: it waits for a condition over the records, bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from .models import (
    BOT_PERMISSIONS,
    DM,
    EPHEMERAL,
    EVERYONE_PERMISSIONS,
    LOADING,
    FakeChannel,
    FakeGuild,
    FakeRole,
    FakeUser,
    InteractionRecord,
    MessageSource,
    RecordedMessage,
    Snowflakes,
    StoredFile,
    Violation,
    ViolationKind,
    now_iso,
)
from .payloads import (
    SETTABLE_FLAGS,
    attachment_payload,
    components_payload,
    embeds_payload,
    user_payload,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

APPLICATION_COMMAND_BADGE = 1 << 23


@dataclass(frozen=True)
class Upload:
    """A file a request carried: `files[index]` of a multipart body (or a test user's upload)."""

    index: int
    filename: str
    data: bytes
    content_type: str | None = None


class FakeState:
    """The world of the fake Discord and the record of everything the bot did in it."""

    def __init__(self, *, token: str, bot_name: str, guild_name: str, channel_names: tuple[str, ...]) -> None:
        self.token = token
        self.ids = Snowflakes()
        self.base_url = ""  # set when the server is bound
        self.application_flags = APPLICATION_COMMAND_BADGE
        self.application_id = self.ids.next()
        self.bot_user = FakeUser(id=self.application_id, username=bot_name, bot=True)
        self.owner = FakeUser(id=self.ids.next(), username="guild-owner", global_name="Guild Owner")
        guild_id = self.ids.next()
        self.guild = FakeGuild(id=guild_id, name=guild_name, owner_id=self.owner.id)
        self.guild.roles.append(FakeRole(id=guild_id, name="@everyone", permissions=EVERYONE_PERMISSIONS))
        bot_role = FakeRole(id=self.ids.next(), name=bot_name, permissions=BOT_PERMISSIONS, position=1)
        bot_role.bot_id = self.bot_user.id
        self.guild.roles.append(bot_role)
        self.bot_user.role_ids.append(bot_role.id)
        for position, name in enumerate(channel_names):
            channel = FakeChannel(id=self.ids.next(), name=name, position=position, guild_id=guild_id)
            self.guild.channels.append(channel)
        self.guild.members[self.owner.id] = self.owner
        self.guild.members[self.bot_user.id] = self.bot_user
        self.dm_channels: dict[str, FakeChannel] = {}  # user id -> DM channel
        self.commands: dict[str | None, list[dict[str, Any]]] = {}  # guild id (None: global) -> commands
        self.files: dict[str, StoredFile] = {}
        self.messages: dict[str, RecordedMessage] = {}
        self.changes: list[str] = []  # the id of the message each create, edit and delete touched, in order
        self.interactions: dict[str, InteractionRecord] = {}
        self.violations: list[Violation] = []
        self.bot_errors: list[str] = []
        self._waiters: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []

    @property
    def gateway_url(self) -> str:
        """The websocket URL: the server's root, with a ws scheme (Discord's is `wss://gateway.discord.gg/`)."""
        return "ws" + self.base_url.removeprefix("http") + "/"

    # -- entities -------------------------------------------------------------------------------------------

    def add_member(
        self, username: str, *, roles: tuple[FakeRole, ...] = (), global_name: str | None = None
    ) -> FakeUser:
        user = FakeUser(id=self.ids.next(), username=username, global_name=global_name or username.title())
        user.role_ids.extend(role.id for role in roles)
        self.guild.members[user.id] = user
        return user

    def add_role(self, name: str, *, permissions: int = 0) -> FakeRole:
        role = FakeRole(id=self.ids.next(), name=name, permissions=permissions, position=len(self.guild.roles))
        self.guild.roles.append(role)
        return role

    def channel(self, channel_id: str) -> FakeChannel | None:
        found = self.guild.channel_by_id(channel_id)
        return found or next((c for c in self.dm_channels.values() if c.id == channel_id), None)

    def dm_channel(self, user: FakeUser) -> FakeChannel:
        if user.id not in self.dm_channels:
            self.dm_channels[user.id] = FakeChannel(id=self.ids.next(), name="", type=DM, recipient=user)
        return self.dm_channels[user.id]

    def user(self, user_id: str) -> FakeUser | None:
        return self.guild.members.get(user_id)

    def find_command(self, name: str) -> dict[str, Any]:
        """The synced command called `name`: the guild's first, then the global one."""
        for scope in (self.guild.id, None):
            for command in self.commands.get(scope, []):
                if command["name"] == name and command.get("type", 1) == 1:
                    return command
        synced = sorted({c["name"] for commands in self.commands.values() for c in commands})
        raise LookupError(f"the bot has not synced a slash command {name!r} (synced: {synced})")

    # -- files ----------------------------------------------------------------------------------------------

    def store_file(self, filename: str, data: bytes, content_type: str | None = None) -> StoredFile:
        file_id = self.ids.next()
        guessed = content_type if content_type not in (None, "application/octet-stream") else None
        guessed = guessed or mimetypes.guess_type(filename)[0]
        url = f"{self.base_url}/attachments/{file_id}/{quote(filename)}"
        stored = StoredFile(id=file_id, filename=filename, data=data, content_type=guessed, url=url)
        self.files[file_id] = stored
        return stored

    def _attachments(
        self, entries: list[dict[str, Any]] | None, uploads: list[Upload], kept: list[StoredFile]
    ) -> list[StoredFile]:
        """The files of a message after a create or edit: `entries` keep old files (by id) and name new ones
        (by upload index); uploads no entry names are added; with no `entries`, `kept` stays as it was."""
        by_index = {upload.index: upload for upload in uploads}
        result: list[StoredFile] = [] if entries is not None else list(kept)
        used: set[int] = set()
        for entry in entries or []:
            entry_id = str(entry.get("id"))
            old = next((f for f in kept if f.id == entry_id), None)
            if old is not None:
                result.append(old)
            elif entry_id.isdigit() and int(entry_id) in by_index:
                upload = by_index[int(entry_id)]
                used.add(upload.index)
                stored = self.store_file(entry.get("filename") or upload.filename, upload.data, upload.content_type)
                stored.description = entry.get("description")
                result.append(stored)
        for upload in uploads:
            if upload.index not in used:
                result.append(self.store_file(upload.filename, upload.data, upload.content_type))
        return result

    # -- messages -------------------------------------------------------------------------------------------

    def create_message(
        self,
        *,
        channel_id: str,
        source: MessageSource,
        body: dict[str, Any],
        uploads: list[Upload],
        interaction: InteractionRecord | None = None,
        loading: bool = False,
    ) -> RecordedMessage:
        files = self._attachments(body.get("attachments"), uploads, [])
        flags = int(body.get("flags") or 0) & SETTABLE_FLAGS
        if interaction is None:
            flags &= ~EPHEMERAL  # only interaction responses can be ephemeral
        if loading:
            flags |= LOADING
        message_id = self.ids.next()
        payload: dict[str, Any] = {
            "id": message_id,
            "channel_id": channel_id,
            "type": 20 if interaction is not None and interaction.type == 2 else 0,
            "author": user_payload(self.bot_user),
            "content": body.get("content") or "",
            "embeds": embeds_payload(body.get("embeds"), files),
            "components": components_payload(body.get("components")),
            "attachments": [attachment_payload(f) for f in files],
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": bool(body.get("tts")),
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "flags": flags,
        }
        if "nonce" in body and body["nonce"] is not None:
            payload["nonce"] = body["nonce"]
        if interaction is not None:
            payload.update(self._interaction_fields(interaction))
        message = RecordedMessage(
            id=message_id,
            channel_id=channel_id,
            source=source,
            interaction_id=interaction.id if interaction else None,
            payload=payload,
            files=files,
            history=[payload],
        )
        self.messages[message_id] = message
        self.changes.append(message_id)
        log.debug("message %s created (%s): %s", message_id, source, message.summary())
        self.notify()
        return message

    def _interaction_fields(self, interaction: InteractionRecord) -> dict[str, Any]:
        user = user_payload(interaction.user)
        return {
            "webhook_id": self.application_id,
            "application_id": self.application_id,
            "interaction_metadata": self._metadata(interaction),
            "interaction": {"id": interaction.id, "type": interaction.type, "name": interaction.name, "user": user},
        }

    def _metadata(self, interaction: InteractionRecord) -> dict[str, Any]:
        """A message's `interaction_metadata`: who triggered it, how, and (for modals) what opened the modal."""
        metadata: dict[str, Any] = {
            "id": interaction.id,
            "type": interaction.type,
            "user": user_payload(interaction.user),
            "authorizing_integration_owners": {"0": self.guild.id},
        }
        if interaction.original_message_id is not None:
            metadata["original_response_message_id"] = interaction.original_message_id
        if interaction.component_message_id is not None and interaction.type == 3:
            metadata["interacted_message_id"] = interaction.component_message_id
        trigger = self.interactions.get(interaction.trigger_id or "")
        if trigger is not None:
            metadata["triggering_interaction_metadata"] = self._metadata(trigger)
        return metadata

    def edit_message(self, message: RecordedMessage, body: dict[str, Any], uploads: list[Upload]) -> RecordedMessage:
        payload = dict(message.payload)
        if "attachments" in body or uploads:
            message.files = self._attachments(body.get("attachments"), uploads, message.files)
            payload["attachments"] = [attachment_payload(f) for f in message.files]
        if "content" in body:
            payload["content"] = body["content"] or ""
        if "embeds" in body:
            payload["embeds"] = embeds_payload(body["embeds"], message.files)
        if "components" in body:
            payload["components"] = components_payload(body["components"])
        flags = payload["flags"] & ~LOADING
        if body.get("flags") is not None:
            flags = (flags & EPHEMERAL) | (int(body["flags"]) & SETTABLE_FLAGS & ~EPHEMERAL)
        payload["flags"] = flags
        payload["edited_timestamp"] = now_iso()
        message.payload = payload
        message.history.append(payload)
        self.changes.append(message.id)
        log.debug("message %s edited: %s", message.id, message.summary())
        self.notify()
        return message

    def delete_message(self, message: RecordedMessage) -> None:
        message.deleted = True
        self.changes.append(message.id)
        log.debug("message %s deleted", message.id)
        self.notify()

    # -- interactions and violations ------------------------------------------------------------------------

    def interaction_by_token(self, token: str) -> InteractionRecord | None:
        return next((i for i in self.interactions.values() if i.token == token), None)

    def record_violation(
        self, kind: ViolationKind, method: str, path: str, message: str, operation_id: str | None = None
    ) -> None:
        violation = Violation(kind=kind, method=method, path=path, message=message, operation_id=operation_id)
        self.violations.append(violation)
        log.warning("fake Discord: %s", violation)
        self.notify()

    # -- waiting --------------------------------------------------------------------------------------------

    def notify(self) -> None:
        """Re-check every waiter; called after each change to the records."""
        for check, future in list(self._waiters):
            if future.done():
                continue
            try:
                result = check()
            except Exception as exc:  # a failing predicate fails the test that waits on it
                future.set_exception(exc)
                continue
            if result is not None:
                future.set_result(result)

    async def wait_until(self, check: Callable[[], T | None], *, timeout: float, what: str) -> T:
        """The first non-None result of `check`, re-evaluated after each change; TimeoutError after `timeout`."""
        result = check()
        if result is not None:
            return result
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        entry = (check, future)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}\n{self.report()}") from None
        finally:
            self._waiters.remove(entry)

    def report(self) -> str:
        """What the fake has seen, for failure messages."""
        lines = ["messages:", *(f"  {m.summary()}" for m in self.messages.values())]
        lines += ["interactions:"]
        lines += [
            f"  {i.id} {i.name!r} callbacks={[c.get('type') for c in i.callbacks]}" for i in self.interactions.values()
        ]
        lines += ["violations:", *(f"  {v}" for v in self.violations)]
        lines += ["bot errors:", *(f"  {e}" for e in self.bot_errors[-5:])]
        return "\n".join(lines)
