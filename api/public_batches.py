"""Batches of the public API: several variants of one problem sent together (`core.submit.batches`).

- `POST /v1/submissions/batches` (scope submit): the fields of POST /v1/submissions, with 1 to 16 `file` parts.
  Each variant is its own submission; the 202 lists them. An `Idempotency-Key` makes a retry answer the first batch.
- `GET /v1/submissions/batches/{batch_id}` (scope read): the batch's state and its variants, ranked by score.
- `GET /v1/submissions/batches/{batch_id}/events` (scope read): every variant's events as one Server-Sent Event
  stream, then a `batch` event with the ranked table. A kept event's SSE `id` is the whole stream's resume point
  (`SUB:EVENT` per variant); send it back as Last-Event-ID.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
from aiohttp import web

from api.batch_models import BatchAccepted, BatchView
from api.problems_json import ProblemError, openapi_problem_responses
from api.public_events import FEED, PACE, frame, sse_frame, stream_frames
from api.public_submit import (
    POOL_TYPES,
    SERVICE,
    accepted_of,
    idempotency_key,
    idempotency_parameter,
    multipart_schema,
    read_parts,
)
from api.user_auth import authenticate
from contract.names import DEFAULT_DTYPE, DEFAULT_MODE
from core.store import fleet as fleet_store
from core.store.batches import BatchRow
from core.submit.batches import (
    MAX_VARIANTS,
    Variant,
    batch_status,
    follow_batch,
    owned_batch,
    parse_cursor,
    submit_batch,
)
from core.submit.intake import parse_dtype, parse_mode

POOL = web.AppKey("batches_pool", asyncpg.Pool)
BATCH_ID = {"name": "batch_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}


def _batch_id(request: web.Request) -> int:
    raw = request.match_info["batch_id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise ProblemError("submission_not_found", f"There is no batch {raw!r}; ids are whole numbers.")
    return int(raw)


async def post_batch(request: web.Request) -> web.Response:
    user = await authenticate(request, "submit")
    key = idempotency_key(request)
    fields, files = await read_parts(request, max_files=MAX_VARIANTS)
    if fields.get("profile_case"):
        raise ProblemError("validation_failed", "A batch is not profiled: submit one variant with mode profile.")
    if fields.get("world_size") not in (None, "", "1"):
        raise ProblemError(
            "validation_failed", "A batch runs on one device: submit a distributed problem's variants one at a time."
        )
    mode = parse_mode(fields.get("mode") or DEFAULT_MODE)
    if mode == "profile":
        raise ProblemError("validation_failed", "A batch is not profiled: submit one variant with mode profile.")
    service = request.app[SERVICE]
    request.app[POOL_TYPES].types = await fleet_store.pool_types(service.pool)
    ticket = await submit_batch(
        service,
        user_external_id=user.external_id,
        user_name=user.display_name,
        slug=fields["problem"],
        variants=[Variant(f.file_name, f.data) for f in files],
        dtype=parse_dtype(fields.get("dtype") or DEFAULT_DTYPE),
        mode=mode,
        gpu=fields.get("gpu") or None,
        client_token=f"api-batch:{key}" if key is not None else None,
    )
    accepted = BatchAccepted.of(ticket, [await accepted_of(service, t) for t in ticket.tickets])
    return web.json_response(text=accepted.model_dump_json(), status=202, headers={"Location": accepted.status})


async def _owned(request: web.Request) -> BatchRow:
    user = await authenticate(request, "read")
    return await owned_batch(request.app[POOL], _batch_id(request), user.external_id)


async def get_batch(request: web.Request) -> web.Response:
    batch = await _owned(request)
    view = BatchView.of(await batch_status(request.app[POOL], batch))
    return web.json_response(text=view.model_dump_json(), headers={"Cache-Control": "no-store"})


async def get_batch_events(request: web.Request) -> web.StreamResponse:
    batch = await _owned(request)
    pool = request.app[POOL]
    cursor = parse_cursor(request.headers.get("Last-Event-ID") or request.query.get("after"), batch)

    async def frames() -> AsyncIterator[bytes]:
        async for item in follow_batch(pool, batch, cursor, request.app[PACE], request.app[FEED]):
            yield sse_frame(item.event, item.cursor)
        view = BatchView.of(await batch_status(pool, batch))
        yield frame("batch", view.model_dump_json())

    return await stream_frames(request, frames(), f"batch {batch.id}")


def register(app: web.Application, pool: asyncpg.Pool) -> None:
    """Add the routes (after public_submit and public_events, whose service and event feed they use)."""
    app[POOL] = pool
    app.router.add_post("/v1/submissions/batches", post_batch)
    app.router.add_get("/v1/submissions/batches/{batch_id}", get_batch)
    app.router.add_get("/v1/submissions/batches/{batch_id}/events", get_batch_events)


def openapi_paths() -> dict[str, Any]:
    form = multipart_schema(
        file={
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_VARIANTS,
            "items": {"type": "string", "format": "binary"},
            "description": f"1 to {MAX_VARIANTS} sources (.cu or .py), each a variant; their names must differ",
        },
        profile=False,
    )
    ref = {"$ref": "#/components/schemas/"}
    return {
        "/v1/submissions/batches": {
            "post": {
                "summary": "Submit up to 16 variants of one problem (scope submit), each its own submission",
                "description": "Every variant is checked before any is stored, and the mode's quota must hold "
                "them all; each then has its own result, quota charge and place in the fair queue.",
                "security": [{"bearer": []}],
                "parameters": [idempotency_parameter("a retry with the same key answers the first batch")],
                "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": form}}},
                "responses": {
                    "202": {
                        "description": "accepted: every variant stored and queued",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": {"$ref": ref["$ref"] + "BatchAccepted"}}},
                    },
                    **openapi_problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
                },
            }
        },
        "/v1/submissions/batches/{batch_id}": {
            "parameters": [BATCH_ID],
            "get": {
                "summary": "A batch's state and its variants, ranked by score (scope read)",
                "security": [{"bearer": []}],
                "responses": {
                    "200": {
                        "description": "the batch",
                        "content": {"application/json": {"schema": {"$ref": ref["$ref"] + "BatchView"}}},
                    },
                    **openapi_problem_responses(401, 403, 404, 429, 503),
                },
            },
        },
        "/v1/submissions/batches/{batch_id}/events": {
            "parameters": [BATCH_ID],
            "get": {
                "summary": "Every variant's events as one Server-Sent Event stream, then the ranked table",
                "description": "Each variant event's `data` is a SubmissionEventView; a kept one's SSE `id` is the "
                "stream's resume point (`SUB:EVENT` per variant, comma-separated) to send back as Last-Event-ID. "
                "The stream ends with a `batch` event whose `data` is a BatchView.",
                "security": [{"bearer": []}],
                "parameters": [
                    {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"}},
                    {"name": "after", "in": "query", "required": False, "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "the event stream",
                        "content": {"text/event-stream": {"itemSchema": {"type": "object"}}},
                    },
                    **openapi_problem_responses(401, 403, 404, 422, 429, 503),
                },
            },
        },
    }
