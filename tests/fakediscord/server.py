"""`FakeDiscord`: a local Discord (REST v10 + Gateway v10) for end-to-end tests of the unmodified bot.

    async with FakeDiscord() as fake:
        configure_discord_base_url(fake.base_url)      # bot.discord_base: where discord.py connects
        alice = fake.add_member("alice")
        ...start the bot with token=fake.token...
        interaction = await fake.invoke_slash(alice, "echo", {"text": "hi"})
        reply = await fake.wait_for_original(interaction)
        assert reply.content == "hi" and fake.violations == []

The server binds 127.0.0.1 on a free port. State and records live in `FakeState` (`fake.state`); this class
adds the network and the user's side: invoking commands, autocompleting, pressing components, and waiting.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from .gateway import GatewayHub
from .interactions import (
    APPLICATION_COMMAND,
    APPLICATION_COMMAND_AUTOCOMPLETE,
    MESSAGE_COMPONENT,
    MODAL_SUBMIT,
    InteractionBuilder,
    OptionValue,
    UserFile,
)
from .models import FakeChannel, FakeGuild, FakeRole, FakeUser, InteractionRecord, RecordedMessage, Violation
from .rest import CoreRoutes, spec_middleware
from .rest_messages import MessageRoutes
from .state import FakeState
from .validation import load_spec

log = logging.getLogger(__name__)

# How long a test waits for the bot by default: generous, because a busy CI host can stall the bot for seconds
# (a chart, a database round trip); a condition that holds returns at once, so only a failure waits this long.
DEFAULT_TIMEOUT_S = 60.0


class FakeDiscord:
    """A fake Discord server: one application, its bot user, one guild, and the records of what the bot did."""

    def __init__(
        self,
        *,
        token: str | None = None,
        bot_name: str = "Kernel Arena",
        guild_name: str = "Kernel Arena Test",
        channels: tuple[str, ...] = ("general", "submissions"),
        heartbeat_interval_ms: int = 41_250,
        spec_path: Path | None = None,
    ) -> None:
        self.token = token or f"fake.{secrets.token_urlsafe(24)}"
        self.state = FakeState(token=self.token, bot_name=bot_name, guild_name=guild_name, channel_names=channels)
        self.spec = load_spec(spec_path)
        self._builder = InteractionBuilder(self.state)
        self.gateway = GatewayHub(self.state, heartbeat_ms=heartbeat_interval_ms)
        self._runner: web.AppRunner | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[spec_middleware(self.state, self.spec)], client_max_size=64 * 1024**2)
        app.add_routes([web.get("/", self.gateway.websocket)])
        app.add_routes(CoreRoutes(self.state).routes())
        app.add_routes(MessageRoutes(self.state, self.gateway.message_event).routes())
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self._app(), handle_signals=False, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.state.base_url = f"http://127.0.0.1:{port}"
        log.info("fake Discord listening on %s", self.base_url)

    async def close(self) -> None:
        await self.gateway.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        """The origin to give `configure_discord_base_url`: REST under `/api/v10`, the gateway at `/`."""
        if not self.state.base_url:
            raise RuntimeError("the fake Discord is not started")
        return self.state.base_url

    @property
    def gateway_url(self) -> str:
        return self.state.gateway_url

    # -- the world ------------------------------------------------------------------------------------------

    @property
    def application_id(self) -> str:
        return self.state.application_id

    @property
    def bot_user(self) -> FakeUser:
        return self.state.bot_user

    @property
    def guild(self) -> FakeGuild:
        return self.state.guild

    def channel(self, name: str) -> FakeChannel:
        return self.state.guild.channel(name)

    def add_member(
        self, username: str, *, roles: tuple[FakeRole, ...] = (), global_name: str | None = None
    ) -> FakeUser:
        return self.state.add_member(username, roles=roles, global_name=global_name)

    def add_role(self, name: str, *, permissions: int = 0) -> FakeRole:
        return self.state.add_role(name, permissions=permissions)

    def dm_channel_id(self, user: FakeUser) -> str:
        return self.state.dm_channel(user).id

    # -- the records ----------------------------------------------------------------------------------------

    @property
    def violations(self) -> list[Violation]:
        """Requests Discord would reject, unknown routes, and the fake's own spec slips. Tests assert `== []`."""
        return self.state.violations

    @property
    def bot_errors(self) -> list[str]:
        """Errors the bot logged while run by `running_bot` (tracebacks included)."""
        return self.state.bot_errors

    @property
    def messages(self) -> list[RecordedMessage]:
        """Every message the bot created, oldest first, each at its latest state (deleted ones flagged)."""
        return list(self.state.messages.values())

    def message(self, message_id: str) -> RecordedMessage:
        return self.state.messages[message_id]

    @property
    def interactions(self) -> dict[str, InteractionRecord]:
        return self.state.interactions

    @property
    def interaction_responses(self) -> dict[str, list[dict[str, Any]]]:
        """Interaction id -> the callback bodies the bot sent for it (normally one)."""
        return {i.id: list(i.callbacks) for i in self.state.interactions.values()}

    def commands(self, *, guild: bool = True) -> list[dict[str, Any]]:
        """The commands the bot synced to the guild (or, with `guild=False`, globally)."""
        return list(self.state.commands.get(self.guild.id if guild else None, []))

    # -- the gateway ----------------------------------------------------------------------------------------

    async def wait_until_connected(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Until the bot has identified (or resumed) and received READY and GUILD_CREATE."""
        await self.state.wait_until(self.gateway.live, timeout=timeout, what="the bot to connect to the gateway")

    async def dispatch(self, event: str, data: dict[str, Any]) -> int:
        """Send a gateway event to the connected bot; returns its sequence number."""
        return await self.gateway.dispatch(event, data)

    async def request_reconnect(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Send RECONNECT (op 7) and wait until the bot has resumed on a new connection."""
        await self.gateway.request_reconnect(timeout=timeout)

    # -- the user's side ------------------------------------------------------------------------------------

    async def _interact(
        self,
        kind: int,
        name: str,
        user: FakeUser,
        channel: FakeChannel,
        data: dict[str, Any],
        *,
        message: RecordedMessage | None = None,
        trigger_id: str | None = None,
        locale: str = "en-US",
    ) -> InteractionRecord:
        """Record an interaction and send it to the bot as INTERACTION_CREATE."""
        interaction_id, token = self.state.ids.next(), f"aW50ZXJhY3Rpb24.{secrets.token_urlsafe(48)}"
        payload = self._builder.payload(
            interaction_id=interaction_id,
            token=token,
            kind=kind,
            data=data,
            user=user,
            channel=channel,
            locale=locale,
            message=message,
        )
        record = InteractionRecord(
            id=interaction_id,
            token=token,
            type=kind,
            name=name,
            user=user,
            channel_id=channel.id,
            payload=payload,
            component_message_id=message.id if message else None,
            trigger_id=trigger_id,
        )
        self.state.interactions[interaction_id] = record
        await self.dispatch("INTERACTION_CREATE", payload)
        log.debug("interaction %s (%s) sent for %s", interaction_id, name, user.username)
        return record

    def _command(
        self, command: str, subcommand_group: str | None, subcommand: str | None
    ) -> tuple[dict[str, Any], list[str]]:
        name, *path = command.split()
        path += [p for p in (subcommand_group, subcommand) if p]
        return self.state.find_command(name), path

    def _resolve_channel(self, channel: FakeChannel | str | None) -> FakeChannel:
        if isinstance(channel, FakeChannel):
            return channel
        return self.channel(channel) if channel else self.guild.channels[0]

    async def invoke_slash(
        self,
        user: FakeUser,
        command: str,
        options: Mapping[str, OptionValue] | None = None,
        *,
        attachments: Sequence[UserFile | tuple[str, bytes]] = (),
        subcommand_group: str | None = None,
        subcommand: str | None = None,
        channel: FakeChannel | str | None = None,
        locale: str = "en-US",
    ) -> InteractionRecord:
        """`user` runs `/command` (e.g. "submit", or "admin problem add" for a subcommand) in `channel`.

        `options` maps option names to values (str, int, float, bool, FakeUser, FakeRole, FakeChannel, or a
        `UserFile` / `(filename, bytes)` for an attachment option); `attachments` fill the command's
        attachment options in order. Returns at once; wait on the record with `wait_for_original` & co.
        """
        definition, path = self._command(command, subcommand_group, subcommand)
        data = self._builder.command_data(definition, path, options or {}, attachments)
        where = self._resolve_channel(channel)
        name = " ".join([definition["name"], *path])
        return await self._interact(APPLICATION_COMMAND, name, user, where, data, locale=locale)

    async def autocomplete(
        self,
        user: FakeUser,
        command: str,
        focused: str,
        value: str,
        options: Mapping[str, OptionValue] | None = None,
        *,
        subcommand_group: str | None = None,
        subcommand: str | None = None,
        channel: FakeChannel | str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> list[dict[str, Any]]:
        """`user` types `value` into option `focused` of `/command`; returns the choices the bot offers."""
        definition, path = self._command(command, subcommand_group, subcommand)
        data = self._builder.command_data(definition, path, {**(options or {}), focused: value}, (), focused=focused)
        name = " ".join([definition["name"], *path])
        where = self._resolve_channel(channel)
        record = await self._interact(APPLICATION_COMMAND_AUTOCOMPLETE, name, user, where, data)
        choices = await self.state.wait_until(
            lambda: record.choices, timeout=timeout, what=f"autocomplete choices for {name} {focused}={value!r}"
        )
        return choices

    async def press_button(self, user: FakeUser, message: RecordedMessage | str, custom_id: str) -> InteractionRecord:
        """`user` presses the button `custom_id` on `message` (which must show it, enabled)."""
        return await self._component(user, message, custom_id, None)

    async def select(
        self, user: FakeUser, message: RecordedMessage | str, custom_id: str, values: list[str]
    ) -> InteractionRecord:
        """`user` picks `values` in the select menu `custom_id` of `message`."""
        return await self._component(user, message, custom_id, values)

    async def submit_modal(
        self, user: FakeUser, interaction: InteractionRecord, values: Mapping[str, str | list[str]]
    ) -> InteractionRecord:
        """`user` fills in and submits the modal the bot opened in answer to `interaction`."""
        modal = next((c.get("data") for c in interaction.callbacks if c.get("type") == 9), None)
        if modal is None:
            raise ValueError(f"interaction {interaction.id} ({interaction.name}) opened no modal")
        data = self._builder.modal_data(modal, values)
        message = self.state.messages.get(interaction.component_message_id or "")
        channel = self._resolve_channel(self.state.channel(interaction.channel_id))
        return await self._interact(
            MODAL_SUBMIT, modal["custom_id"], user, channel, data, message=message, trigger_id=interaction.id
        )

    async def _component(
        self, user: FakeUser, message: RecordedMessage | str, custom_id: str, values: list[str] | None
    ) -> InteractionRecord:
        recorded = self.state.messages[message] if isinstance(message, str) else self.state.messages[message.id]
        if recorded.deleted:
            raise ValueError(f"message {recorded.id} was deleted; its components are gone")
        data = self._builder.component_data(recorded, custom_id, values)
        channel = self.state.channel(recorded.channel_id)
        if channel is None:
            raise ValueError(f"message {recorded.id} is in an unknown channel")
        return await self._interact(MESSAGE_COMPONENT, custom_id, user, channel, data, message=recorded)

    # -- waiting --------------------------------------------------------------------------------------------

    def checkpoint(self) -> int:
        """A mark in the history of message changes, for `wait_for_message(..., after=mark)`."""
        return len(self.state.changes)

    async def wait_for_message(
        self,
        predicate: Callable[[RecordedMessage], bool] | None = None,
        *,
        after: int | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> RecordedMessage:
        """The oldest message whose latest state satisfies `predicate`, checked now and after every change.

        With `after=fake.checkpoint()` taken earlier, only messages created or edited since then count: the
        next message or edit, without the race of starting to wait after the bot already answered.
        """

        def check() -> RecordedMessage | None:
            changed = self.state.changes[after:] if after is not None else list(self.state.messages)
            candidates = (self.state.messages[i] for i in dict.fromkeys(changed))
            return next((m for m in candidates if not m.deleted and (predicate is None or predicate(m))), None)

        return await self.state.wait_until(check, timeout=timeout, what="a message matching the predicate")

    async def wait_for_response(
        self, interaction: InteractionRecord, *, timeout: float = DEFAULT_TIMEOUT_S
    ) -> dict[str, Any]:
        """The first callback body the bot sent for `interaction` (`{"type": 4|5|..., "data": ...}`)."""
        return await self.state.wait_until(
            lambda: interaction.callbacks[0] if interaction.callbacks else None,
            timeout=timeout,
            what=f"a response to interaction {interaction.id} ({interaction.name})",
        )

    async def wait_for_original(
        self,
        interaction: InteractionRecord,
        predicate: Callable[[RecordedMessage], bool] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> RecordedMessage:
        """The interaction's original response once it exists, is not "thinking", and satisfies `predicate`."""

        def check() -> RecordedMessage | None:
            message = self.state.messages.get(interaction.original_message_id or "")
            if message is None or message.loading or (predicate is not None and not predicate(message)):
                return None
            return message

        what = f"the original response to interaction {interaction.id} ({interaction.name})"
        return await self.state.wait_until(check, timeout=timeout, what=what)

    async def wait_for_followup(
        self,
        interaction: InteractionRecord,
        predicate: Callable[[RecordedMessage], bool] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> RecordedMessage:
        """The first follow-up message (not the replaced "thinking" placeholder) satisfying `predicate`."""

        def check() -> RecordedMessage | None:
            found = (self.state.messages[i] for i in interaction.followup_ids)
            return next((m for m in found if predicate is None or predicate(m)), None)

        what = f"a follow-up to interaction {interaction.id} ({interaction.name})"
        return await self.state.wait_until(check, timeout=timeout, what=what)

    async def wait_for_commands(self, *names: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Until the bot has synced commands with all of `names` (any command when none are given)."""

        def check() -> bool | None:
            synced = {c["name"] for commands in self.state.commands.values() for c in commands}
            return True if synced and set(names) <= synced else None

        await self.state.wait_until(check, timeout=timeout, what=f"the bot to sync commands {list(names)}")
