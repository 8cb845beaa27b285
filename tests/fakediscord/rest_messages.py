"""REST routes that create and edit messages: channel messages, interaction callbacks, interaction webhooks.

Beyond the schemas, these enforce the rules of Discord that bots trip on, each recorded as a violation: an
interaction answered twice (40060), a follow-up or an `@original` edit before any answer, an empty message
(50006), embeds over 6,000 characters in all, and a callback type the interaction does not allow.

As in Discord, the first follow-up to a deferred ("thinking") response replaces the placeholder: it edits the
original message, which keeps the ephemerality chosen at defer time.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .models import InteractionRecord, RecordedMessage
from .rest import API_PREFIX, body_of, discord_error, json_response

if TYPE_CHECKING:
    from .state import FakeState

log = logging.getLogger(__name__)

MAX_EMBED_CHARS = 6000
# Interaction type -> the callback types it may be answered with.
ALLOWED_CALLBACKS = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}
MessageEvent = Callable[[str, RecordedMessage], Awaitable[None]]


def embed_chars(embeds: list[dict[str, Any]]) -> int:
    """The characters Discord counts against the 6,000 limit, over all embeds of a message."""
    total = 0
    for embed in embeds:
        total += len(embed.get("title") or "") + len(embed.get("description") or "")
        total += len((embed.get("footer") or {}).get("text") or "") + len((embed.get("author") or {}).get("name") or "")
        total += sum(len(f.get("name") or "") + len(f.get("value") or "") for f in embed.get("fields") or [])
    return total


class MessageRoutes:
    def __init__(self, state: FakeState, on_message_event: MessageEvent) -> None:
        self.state = state
        self.on_message_event = on_message_event

    def routes(self) -> list[web.RouteDef]:
        api = API_PREFIX
        hook = f"{api}/webhooks/{{app_id}}/{{token}}"
        return [
            web.post(f"{api}/channels/{{channel_id}}/messages", self.create_channel_message),
            web.get(f"{api}/channels/{{channel_id}}/messages/{{message_id}}", self.get_channel_message),
            web.patch(f"{api}/channels/{{channel_id}}/messages/{{message_id}}", self.edit_channel_message),
            web.delete(f"{api}/channels/{{channel_id}}/messages/{{message_id}}", self.delete_channel_message),
            web.post(f"{api}/interactions/{{interaction_id}}/{{token}}/callback", self.callback),
            web.post(hook, self.followup),
            web.get(f"{hook}/messages/@original", self.get_webhook_message),
            web.patch(f"{hook}/messages/@original", self.edit_webhook_message),
            web.delete(f"{hook}/messages/@original", self.delete_webhook_message),
            web.get(f"{hook}/messages/{{message_id}}", self.get_webhook_message),
            web.patch(f"{hook}/messages/{{message_id}}", self.edit_webhook_message),
            web.delete(f"{hook}/messages/{{message_id}}", self.delete_webhook_message),
        ]

    def _reject(self, request: web.Request, status: int, code: int, message: str) -> web.Response:
        """A request Discord refuses for a rule the schema does not express: answered and recorded."""
        path = request.path.removeprefix(API_PREFIX)
        self.state.record_violation("protocol", request.method, path, f"{message} ({code})")
        return discord_error(status, code, message)

    def _check_content(self, request: web.Request, data: dict[str, Any], *, creating: bool) -> web.Response | None:
        uploads = body_of(request).uploads
        keys = ("content", "embeds", "components", "sticker_ids", "poll", "attachments")
        if creating and not uploads and not any(data.get(k) for k in keys):
            return self._reject(request, 400, 50006, "Cannot send an empty message")
        if embed_chars(data.get("embeds") or []) > MAX_EMBED_CHARS:
            return self._reject(request, 400, 50035, f"Embed size exceeds maximum size of {MAX_EMBED_CHARS}")
        return None

    async def _announce(self, event: str, message: RecordedMessage) -> None:
        if not message.ephemeral:
            await self.on_message_event(event, message)

    # -- channel messages -----------------------------------------------------------------------------------

    def _channel_message(self, request: web.Request) -> RecordedMessage | web.Response:
        message = self.state.messages.get(request.match_info["message_id"])
        if message is None or message.deleted or message.ephemeral:
            return discord_error(404, 10008, "Unknown Message")
        if message.channel_id != request.match_info["channel_id"]:
            return discord_error(404, 10008, "Unknown Message")
        return message

    async def create_channel_message(self, request: web.Request) -> web.Response:
        channel_id = request.match_info["channel_id"]
        if self.state.channel(channel_id) is None:
            return discord_error(404, 10003, "Unknown Channel")
        body = body_of(request)
        data = body.json or {}
        rejected = self._check_content(request, data, creating=True)
        if rejected is not None:
            return rejected
        message = self.state.create_message(channel_id=channel_id, source="channel", body=data, uploads=body.uploads)
        await self._announce("MESSAGE_CREATE", message)
        return json_response(message.payload)

    async def get_channel_message(self, request: web.Request) -> web.Response:
        message = self._channel_message(request)
        return message if isinstance(message, web.Response) else json_response(message.payload)

    async def edit_channel_message(self, request: web.Request) -> web.Response:
        message = self._channel_message(request)
        if isinstance(message, web.Response):
            return message
        return await self._edit(request, message)

    async def delete_channel_message(self, request: web.Request) -> web.Response:
        message = self._channel_message(request)
        if isinstance(message, web.Response):
            return message
        self.state.delete_message(message)
        await self.on_message_event("MESSAGE_DELETE", message)
        return web.Response(status=204)

    async def _edit(self, request: web.Request, message: RecordedMessage) -> web.Response:
        body = body_of(request)
        data = body.json or {}
        rejected = self._check_content(request, data, creating=False)
        if rejected is not None:
            return rejected
        self.state.edit_message(message, data, body.uploads)
        await self._announce("MESSAGE_UPDATE", message)
        return json_response(message.payload)

    # -- interaction callbacks ------------------------------------------------------------------------------

    async def callback(self, request: web.Request) -> web.Response:
        state = self.state
        record = state.interactions.get(request.match_info["interaction_id"])
        if record is None or record.token != request.match_info["token"]:
            return self._reject(request, 404, 10062, "Unknown interaction")
        if record.acknowledged:
            return self._reject(request, 400, 40060, "Interaction has already been acknowledged.")
        body = body_of(request)
        kind = int(body.json["type"])
        if kind not in ALLOWED_CALLBACKS.get(record.type, set()):
            return self._reject(request, 400, 50035, f"Callback type {kind} is not allowed for this interaction")
        data = body.json.get("data") or {}
        if kind == 4 and (rejected := self._check_content(request, data, creating=True)) is not None:
            return rejected
        record.callbacks.append(body.json)
        message: RecordedMessage | None = None
        if kind in (4, 5):
            message = state.create_message(
                channel_id=record.channel_id,
                source="response",
                body=data if kind == 4 else {"flags": data.get("flags")},
                uploads=body.uploads if kind == 4 else [],
                interaction=record,
                loading=kind == 5,
            )
            record.original_message_id = message.id
            await self._announce("MESSAGE_CREATE", message)
        elif kind in (6, 7) and record.component_message_id is not None:
            record.original_message_id = record.component_message_id
            if kind == 7:
                message = state.edit_message(state.messages[record.component_message_id], data, body.uploads)
                await self._announce("MESSAGE_UPDATE", message)
        state.notify()
        log.debug("interaction %s answered with callback type %d", record.id, kind)
        if request.query.get("with_response", "").lower() not in ("1", "true"):
            return web.Response(status=204)
        return json_response(self._callback_response(record, kind, message))

    @staticmethod
    def _callback_response(record: InteractionRecord, kind: int, message: RecordedMessage | None) -> dict[str, Any]:
        interaction: dict[str, Any] = {"id": record.id, "type": record.type}
        response: dict[str, Any] = {"interaction": interaction}
        if message is not None:
            interaction["response_message_id"] = message.id
            interaction["response_message_loading"] = message.loading
            interaction["response_message_ephemeral"] = message.ephemeral
            if kind in (4, 7):
                response["resource"] = {"type": kind, "message": message.payload}
        return response

    # -- interaction webhooks -------------------------------------------------------------------------------

    def _webhook_record(self, request: web.Request) -> InteractionRecord | web.Response:
        record = self.state.interaction_by_token(request.match_info["token"])
        if record is None or request.match_info["app_id"] != self.state.application_id:
            return self._reject(request, 404, 10015, "Unknown Webhook")
        return record

    async def followup(self, request: web.Request) -> web.Response:
        record = self._webhook_record(request)
        if isinstance(record, web.Response):
            return record
        if not record.acknowledged:
            return self._reject(request, 404, 10015, "Unknown Webhook")
        body = body_of(request)
        data = body.json or {}
        rejected = self._check_content(request, data, creating=True)
        if rejected is not None:
            return rejected
        original = self.state.messages.get(record.original_message_id or "")
        if original is not None and original.loading and not original.deleted:
            message = self.state.edit_message(original, {k: v for k, v in data.items() if k != "flags"}, body.uploads)
            await self._announce("MESSAGE_UPDATE", message)
        else:
            message = self.state.create_message(
                channel_id=record.channel_id, source="followup", body=data, uploads=body.uploads, interaction=record
            )
            record.followup_ids.append(message.id)
            await self._announce("MESSAGE_CREATE", message)
        self.state.notify()
        if request.query.get("wait", "").lower() not in ("1", "true"):
            return web.Response(status=204)
        return json_response(message.payload)

    def _webhook_message(self, request: web.Request) -> RecordedMessage | web.Response:
        record = self._webhook_record(request)
        if isinstance(record, web.Response):
            return record
        message_id = request.match_info.get("message_id")
        if message_id is None:  # @original
            message_id = record.original_message_id
            if message_id is None:
                return self._reject(request, 404, 10008, "Unknown Message (the interaction has no response yet)")
        elif message_id not in (record.original_message_id, *record.followup_ids):
            return discord_error(404, 10008, "Unknown Message")
        message = self.state.messages[message_id]
        return discord_error(404, 10008, "Unknown Message") if message.deleted else message

    async def get_webhook_message(self, request: web.Request) -> web.Response:
        message = self._webhook_message(request)
        return message if isinstance(message, web.Response) else json_response(message.payload)

    async def edit_webhook_message(self, request: web.Request) -> web.Response:
        message = self._webhook_message(request)
        return message if isinstance(message, web.Response) else await self._edit(request, message)

    async def delete_webhook_message(self, request: web.Request) -> web.Response:
        message = self._webhook_message(request)
        if isinstance(message, web.Response):
            return message
        self.state.delete_message(message)
        if not message.ephemeral:
            await self.on_message_event("MESSAGE_DELETE", message)
        return web.Response(status=204)
