"""GET /v1/submissions/{id}/events: a submission's events as Server-Sent Events, for its author (scope read).

Every event comes from the store (`core.submit.events`), so any replica of the API serves any submission, and
a follower that lost its connection sends `Last-Event-ID` (or `?after=`, for clients that cannot set headers) and
gets exactly the kept events after that one: none lost, none repeated. Each event is

    id: 7281            (kept events only; a `queue` event, the place while waiting, and a `case` event, a test
                         case its runner finished, have none)
    event: running
    data: {...}         (a SubmissionEventView)

and the stream ends after the `result` event. A comment line every KEEPALIVE_S keeps proxies from closing a
quiet stream. When the API shuts down, every open stream ends at once with a comment saying to reconnect (the
`retry` field says when), so that a stopping replica is not held for its shutdown timeout by its followers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
from aiohttp import web

from api.problems_json import ProblemError, openapi_problem_responses
from api.public_subs import SUBMISSION_ID, submission_id
from api.submission_models import SubmissionEventView
from api.user_auth import authenticate
from core.submit.events import EventFeed, FollowPace, SubmissionEvent, follow
from core.submit.intake import get_submission

log = logging.getLogger(__name__)

POOL = web.AppKey("events_pool", asyncpg.Pool)
PACE = web.AppKey("events_pace", FollowPace)
FEED = web.AppKey("events_feed", EventFeed)
CLOSING = web.AppKey("events_closing", asyncio.Event)
KEEPALIVE_S = 15.0
RECONNECT_HINT = b": this server is shutting down; reconnect with Last-Event-ID\n\n"
# What a client waits before reconnecting after a dropped stream (the SSE `retry` field), in milliseconds.
RETRY_MS = 2000
_DONE = object()
_CLOSING = object()


def resume_after(request: web.Request) -> int | None:
    """The id of the last event the client has (`Last-Event-ID`, else `?after=`), or None for the whole stream."""
    raw = request.headers.get("Last-Event-ID") or request.query.get("after")
    if raw is None or raw.strip() == "":
        return None
    raw = raw.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise ProblemError(
            "invalid_option", f"Last-Event-ID is {raw[:40]!r}; send back the `id` of the last event you received."
        )
    return int(raw)


def sse_frame(event: SubmissionEvent, event_id: str | None = None) -> bytes:
    """One event in the text/event-stream format; its SSE `id` is the event's own unless `event_id` says."""
    view = SubmissionEventView.of(event)
    return frame(event.type, view.model_dump_json(), event_id or (None if event.id is None else str(event.id)))


def frame(event_type: str, data: str, event_id: str | None = None) -> bytes:
    lines = [] if event_id is None else [f"id: {event_id}"]
    lines += [f"event: {event_type}", f"data: {data}"]
    return ("\n".join(lines) + "\n\n").encode()


async def _next(events: asyncio.Queue[Any], closing: asyncio.Event) -> Any:
    """The stream's next event; None after KEEPALIVE_S without one; _CLOSING once the API is shutting down."""
    if closing.is_set():
        return _CLOSING
    getting = asyncio.ensure_future(events.get())
    shutdown = asyncio.ensure_future(closing.wait())
    try:
        done, _ = await asyncio.wait({getting, shutdown}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in (getting, shutdown):
            waiter.cancel()
    if getting in done:
        return getting.result()
    return _CLOSING if shutdown in done else None


async def get_events(request: web.Request) -> web.StreamResponse:
    user = await authenticate(request, "read")
    pool = request.app[POOL]
    sub_id = submission_id(request)
    after = resume_after(request)
    sub = await get_submission(pool, sub_id)
    if sub.user_id != user.user_id:
        # Another's submission reads as not found, as GET /v1/submissions/{id} answers it.
        raise ProblemError(
            "submission_not_found", f"You have no submission #{sub_id}; GET /v1/submissions lists yours."
        )
    frames = (sse_frame(event) async for event in follow(pool, sub_id, after, request.app[PACE], request.app[FEED]))
    return await stream_frames(request, frames, f"submission {sub_id}")


async def stream_frames(request: web.Request, frames: AsyncIterator[bytes], label: str) -> web.StreamResponse:
    """Answer with the frames as a Server-Sent Event stream: a keep-alive comment while none comes, the reconnect
    hint when the API shuts down, and a clean end once the frames end (or fail: the client then resumes)."""
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",  # nginx: pass each event on at once
        }
    )
    await response.prepare(request)
    await response.write(f"retry: {RETRY_MS}\n\n".encode())
    events: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)

    async def read() -> None:
        try:
            async for frame in frames:
                await events.put(frame)
        except Exception:
            await events.put(_DONE)
            raise
        await events.put(_DONE)

    reader = asyncio.create_task(read(), name=f"events-{label}")
    closing = request.app[CLOSING]
    try:
        while True:
            item = await _next(events, closing)
            if item is _CLOSING:
                await response.write(RECONNECT_HINT)
                break
            if item is None:
                await response.write(b": keep-alive\n\n")
                continue
            if item is _DONE:
                reader.result()  # a store failure ends the stream; the client reconnects with Last-Event-ID
                break
            await response.write(item)
    except (ConnectionResetError, asyncio.CancelledError):
        reader.cancel()
        raise
    except Exception:
        # The answer has begun: no problem details can follow the events. The stream ends cleanly instead, so that
        # the client reconnects with Last-Event-ID rather than wait on a response that never finishes.
        log.exception("%s: its event stream failed", label)
    finally:
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


def register(app: web.Application, pool: asyncpg.Pool, pace: FollowPace | None = None) -> None:
    app[POOL] = pool
    app[PACE] = pace or FollowPace()
    app[FEED] = EventFeed(pool)
    app[CLOSING] = asyncio.Event()
    app.router.add_get("/v1/submissions/{submission_id}/events", get_events)
    app.on_shutdown.append(_end_streams)

    async def stop_listening(app: web.Application) -> None:
        await app[FEED].close()

    app.on_cleanup.append(stop_listening)


async def _end_streams(app: web.Application) -> None:
    """Runs before the server waits for its open requests: the streams end now, each with its reconnect hint."""
    app[CLOSING].set()


SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "kept events only: send it back as Last-Event-ID"},
        "event": {"type": "string", "description": "the event's `type`"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/SubmissionEventView"},
        },
        "retry": {"type": "integer", "minimum": 0, "description": "milliseconds to wait before reconnecting"},
    },
}


def openapi_paths() -> dict[str, Any]:
    return {
        "/v1/submissions/{submission_id}/events": {
            "parameters": [SUBMISSION_ID],
            "get": {
                "summary": "A submission's events as Server-Sent Events, resumable with Last-Event-ID (scope read)",
                "description": "Each event's `data` is a SubmissionEventView; its SSE `id` (kept events only) is "
                "the `id` to send back as Last-Event-ID. The stream ends after the `result` event.",
                "security": [{"bearer": []}],
                "parameters": [
                    {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"}},
                    {"name": "after", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 0}},
                ],
                "responses": {
                    "200": {
                        "description": "the event stream",
                        "content": {
                            # Each event as OpenAPI 3.2 describes a Server-Sent Event: its fields, the `data` a
                            # SubmissionEventView in JSON. A frame of `retry` alone (the first) has no data.
                            "text/event-stream": {"itemSchema": SSE_EVENT}
                        },
                    },
                    **openapi_problem_responses(401, 403, 404, 422, 429, 503),
                },
            },
        }
    }
