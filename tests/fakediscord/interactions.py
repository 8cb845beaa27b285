"""INTERACTION_CREATE payloads as Discord builds them when a user runs a command or presses a component.

Options are checked against the command the bot synced, as Discord's client checks them before sending: an
unknown or missing option, a value of the wrong type or outside the declared choices or range is the test's
mistake and raises `ValueError` at once, instead of producing a payload Discord would never send.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from .models import FakeChannel, FakeRole, FakeUser, RecordedMessage, walk_components
from .payloads import (
    ATTACHMENT_SIZE_LIMIT,
    attachment_payload,
    channel_payload,
    components_payload,
    member_payload,
    role_payload,
    user_payload,
)

if TYPE_CHECKING:
    from .state import FakeState

log = logging.getLogger(__name__)

SUB_COMMAND, SUB_COMMAND_GROUP, STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER, ATTACHMENT = range(
    1, 12
)
APPLICATION_COMMAND, MESSAGE_COMPONENT, APPLICATION_COMMAND_AUTOCOMPLETE, MODAL_SUBMIT = 2, 3, 4, 5
TEXT_INPUT, LABEL, ACTION_ROW = 4, 18, 1
SELECTS = (3, 5, 6, 7, 8)


@dataclass(frozen=True)
class UserFile:
    """A file a test user attaches to an attachment option; `(filename, data)` tuples are accepted too."""

    filename: str
    data: bytes
    content_type: str | None = None


OptionValue = Union[str, int, float, bool, FakeUser, FakeRole, FakeChannel, UserFile, tuple[str, bytes]]  # noqa: UP007


class InteractionBuilder:
    def __init__(self, state: FakeState) -> None:
        self.state = state

    def command_data(
        self,
        command: dict[str, Any],
        path: Sequence[str],
        options: Mapping[str, OptionValue],
        attachments: Sequence[UserFile | tuple[str, bytes]],
        *,
        focused: str | None = None,
    ) -> dict[str, Any]:
        """`data` of an APPLICATION_COMMAND (or, with `focused`, an AUTOCOMPLETE) for the synced `command`."""
        data: dict[str, Any] = {"id": command["id"], "name": command["name"], "type": command.get("type", 1)}
        if "guild_id" in command:
            data["guild_id"] = command["guild_id"]
        container, definitions = data, list(command.get("options", []))
        shown = f"/{command['name']}"
        for part in path:
            found = next(
                (d for d in definitions if d["name"] == part and d["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP)), None
            )
            if found is None:
                subs = [d["name"] for d in definitions if d["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP)]
                raise ValueError(f"{shown} has no subcommand {part!r} (has {subs})")
            node: dict[str, Any] = {"name": part, "type": found["type"]}
            container.setdefault("options", []).append(node)
            container, definitions, shown = node, list(found.get("options", [])), f"{shown} {part}"
        subs = [d["name"] for d in definitions if d["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP)]
        if subs:
            raise ValueError(f"{shown} needs a subcommand: one of {subs}")
        resolved: dict[str, dict[str, Any]] = {}
        leaf = self._leaf_options(shown, definitions, dict(options), list(attachments), focused, resolved)
        if leaf:
            container["options"] = leaf
        if resolved:
            data["resolved"] = resolved
        return data

    def _leaf_options(
        self,
        shown: str,
        definitions: list[dict[str, Any]],
        values: dict[str, OptionValue],
        attachments: list[UserFile | tuple[str, bytes]],
        focused: str | None,
        resolved: dict[str, dict[str, Any]],
    ) -> list[dict[str, Any]]:
        for definition in definitions:
            if definition["type"] == ATTACHMENT and definition["name"] not in values and attachments:
                values[definition["name"]] = attachments.pop(0)
        names = [d["name"] for d in definitions]
        if attachments:
            raise ValueError(f"{shown}: more attachments than attachment options ({names})")
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{shown} has no option {unknown} (options: {names})")
        if focused is None:
            missing = [d["name"] for d in definitions if d.get("required") and d["name"] not in values]
            if missing:
                raise ValueError(f"{shown}: required options {missing} are missing")
        elif not any(d["name"] == focused and d.get("autocomplete") for d in definitions):
            raise ValueError(f"{shown}: option {focused!r} does not autocomplete")
        result = []
        for definition in definitions:
            name = definition["name"]
            if name == focused:
                result.append(
                    {"name": name, "type": definition["type"], "value": str(values.get(name, "")), "focused": True}
                )
            elif name in values:
                value = self._option_value(shown, definition, values[name], resolved)
                result.append({"name": name, "type": definition["type"], "value": value})
        return result

    def _option_value(
        self, shown: str, definition: dict[str, Any], value: OptionValue, resolved: dict[str, dict[str, Any]]
    ) -> Any:
        kind, name = definition["type"], f"{shown} {definition['name']}"
        if kind == STRING and isinstance(value, str):
            if not definition.get("min_length", 0) <= len(value) <= definition.get("max_length", 6000):
                raise ValueError(f"{name}: {value!r} has a length outside the declared range")
        elif kind in (INTEGER, NUMBER) and isinstance(value, int | float) and not isinstance(value, bool):
            if kind == INTEGER and not isinstance(value, int):
                raise ValueError(f"{name}: {value!r} is not an integer")
            low, high = definition.get("min_value"), definition.get("max_value")
            if (low is not None and value < low) or (high is not None and value > high):
                raise ValueError(f"{name}: {value!r} is outside [{low}, {high}]")
        elif kind == BOOLEAN and isinstance(value, bool):
            pass
        elif kind in (USER, MENTIONABLE) and isinstance(value, FakeUser):
            resolved.setdefault("users", {})[value.id] = user_payload(value)
            member = member_payload(self.state.guild, value, with_permissions=True)
            del member["user"]
            resolved.setdefault("members", {})[value.id] = member
            return value.id
        elif kind in (ROLE, MENTIONABLE) and isinstance(value, FakeRole):
            resolved.setdefault("roles", {})[value.id] = role_payload(value)
            return value.id
        elif kind == CHANNEL and isinstance(value, FakeChannel):
            channel = {k: v for k, v in channel_payload(value).items() if k in ("id", "name", "type", "parent_id")}
            resolved.setdefault("channels", {})[value.id] = {**channel, "permissions": str(_all_of(self.state, value))}
            return value.id
        elif kind == ATTACHMENT and isinstance(value, UserFile | tuple):
            upload = value if isinstance(value, UserFile) else UserFile(*value)
            stored = self.state.store_file(upload.filename, upload.data, upload.content_type)
            resolved.setdefault("attachments", {})[stored.id] = attachment_payload(stored, ephemeral=True)
            return stored.id
        else:
            raise ValueError(f"{name}: {value!r} does not fit an option of type {kind}")
        choices = [c["value"] for c in definition.get("choices", [])]
        if choices and value not in choices:
            raise ValueError(f"{name}: {value!r} is not one of the declared choices {choices}")
        return value

    def component_data(self, message: RecordedMessage, custom_id: str, values: list[str] | None) -> dict[str, Any]:
        components = [c for c in walk_components(message.components) if c.get("custom_id") == custom_id]
        if not components:
            ids = [c.get("custom_id") for c in walk_components(message.components) if c.get("custom_id")]
            raise ValueError(f"message {message.id} has no component {custom_id!r} (has {ids})")
        component = components[0]
        if component.get("disabled"):
            raise ValueError(f"component {custom_id!r} of message {message.id} is disabled; no user can use it")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component["type"]}
        if component["type"] == 2 and values is not None:
            raise ValueError(f"component {custom_id!r} is a button: it takes no values")
        if component["type"] != 2:
            offered = [o["value"] for o in component.get("options", [])]
            if component["type"] == 3 and any(v not in offered for v in values or []):
                raise ValueError(f"select {custom_id!r} offers {offered}, not {values}")
            data["values"] = list(values or [])
        return data

    def modal_data(self, modal: dict[str, Any], values: Mapping[str, str | list[str]]) -> dict[str, Any]:
        """`data` of a MODAL_SUBMIT for the modal the bot opened (callback type 9), with the user's `values`
        by custom_id: text for text inputs, lists for selects. The structure mirrors the modal's."""
        used: set[str] = set()

        def submitted(component: dict[str, Any]) -> dict[str, Any]:
            kind, custom_id = component["type"], component.get("custom_id", "")
            result: dict[str, Any] = {"type": kind, "id": component["id"]}
            if kind == ACTION_ROW:
                result["components"] = [submitted(c) for c in component.get("components", [])]
            elif kind == LABEL:
                result["component"] = submitted(component["component"])
            elif kind == TEXT_INPUT:
                value = values.get(custom_id, component.get("value", ""))
                if component.get("required", True) and not value:
                    raise ValueError(f"modal {modal['custom_id']!r}: text input {custom_id!r} is required")
                result.update(custom_id=custom_id, value=value)
                used.add(custom_id)
            elif kind in SELECTS:
                result.update(custom_id=custom_id, values=list(values.get(custom_id, [])))
                used.add(custom_id)
            return result

        components = [submitted(c) for c in components_payload(modal.get("components"))]
        unknown = sorted(set(values) - used)
        if unknown:
            raise ValueError(f"modal {modal['custom_id']!r} has no inputs {unknown} (has {sorted(used)})")
        return {"custom_id": modal["custom_id"], "components": components}

    def payload(
        self,
        *,
        interaction_id: str,
        token: str,
        kind: int,
        data: dict[str, Any],
        user: FakeUser,
        channel: FakeChannel,
        locale: str,
        message: RecordedMessage | None = None,
    ) -> dict[str, Any]:
        state, guild = self.state, self.state.guild
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": state.application_id,
            "type": kind,
            "data": data,
            "guild_id": guild.id,
            "guild": {"id": guild.id, "locale": guild.locale, "features": []},
            "channel_id": channel.id,
            "channel": {**channel_payload(channel), "permissions": str(_all_of(state, channel, user))},
            "member": member_payload(guild, user, with_permissions=True),
            "token": token,
            "version": 1,
            "app_permissions": str(guild.permissions_of(state.bot_user)),
            "locale": locale,
            "guild_locale": guild.locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "authorizing_integration_owners": {"0": guild.id},
            "context": 0,
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
        }
        if message is not None:
            payload["message"] = message.payload
        return payload


def _all_of(state: FakeState, channel: FakeChannel, user: FakeUser | None = None) -> int:
    """Permissions in a channel: the guild-level ones (the fake has no channel overwrites)."""
    del channel
    return state.guild.permissions_of(user or state.bot_user)
