"""POST /v1/submissions: a competitor's upload, taken as `/submit` takes it in Discord.

The same checks (extension, size, UTF-8, problem, dtype, mode, the GPU pool), through the same core call
(`core.submit.service.ArenaService.submit`) under the token owner's identity: one quota, the rate-limit buckets of their
Discord runs. The submission and its queued job are stored before the 202 answers with its id and queue place.

The body is `multipart/form-data` with the fields `problem`, `file` (the source, with its file name), and optional
`dtype`, `mode`, `gpu`, `profile_case`, `world_size` (a distributed problem's ranks). An `Idempotency-Key` header
makes a retry answer the first submission,
and the same key with another body is refused (409 `idempotency_conflict`), as the IETF idempotency-key draft
says. A ranked run on a problem that a contest holds is answered with `contests`: what it will count for, or why
none (a run made before the contest's start counts for nothing there, and says so now rather than after its result).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg
from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from api.problems_json import ProblemError, openapi_problem_responses
from api.public_subs import contests_of
from api.settings import ApiSettings
from api.submission_models import SubmissionAccepted
from api.user_auth import authenticate
from contract.names import DEFAULT_DTYPE, DEFAULT_MODE, DTYPES, MODES, DType, Mode
from contract.wire import MAX_SOURCE_BYTES
from core.store import fleet as fleet_store
from core.submit.intake import parse_dtype, parse_mode
from core.submit.service import ArenaService, SubmitTicket
from core.submit.uploads import check_declared

SERVICE = web.AppKey("submit_service", ArenaService)
# A text field (a slug, a dtype) is short; anything longer is not one.
MAX_FIELD_BYTES = 256
MAX_IDEMPOTENCY_KEY = 100
TEXT_FIELDS = ("problem", "dtype", "mode", "gpu", "profile_case", "world_size")


class _PoolTypes:
    """The GPU pools a submission may name: read from the store before each submit (a pool exists once an operator
    made a token for it; its jobs wait there until a runner joins), and handed to ArenaService, which asks
    synchronously."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def __call__(self) -> list[str]:
        return self.types


POOL_TYPES = web.AppKey("submit_pool_types", _PoolTypes)


@dataclass(frozen=True)
class SubmissionForm:
    problem: str
    file_name: str
    data: bytes
    dtype: DType = "float32"
    mode: Mode = "benchmark"
    gpu: str | None = None
    profile_case: int | None = None
    world_size: int = 1


async def _read_limited(part: BodyPartReader, limit: int) -> bytes | None:
    """The part's bytes, or None once it passes `limit` (what is left of it is never read)."""
    data = bytearray()
    while True:
        chunk = await part.read_chunk(64 * 1024)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            return None


@dataclass(frozen=True)
class UploadedFile:
    file_name: str
    data: bytes


async def read_parts(request: web.Request, max_files: int = 1) -> tuple[dict[str, str], list[UploadedFile]]:
    """The multipart body's text fields and its `file` parts (at most `max_files`), each checked for what can be
    checked before the core sees it: the names, the sizes, a field sent twice."""
    if request.content_type != "multipart/form-data":
        raise ProblemError(
            "unsupported_media_type",
            f"Send the submission as multipart/form-data (fields problem and file), not {request.content_type}.",
        )
    fields: dict[str, str] = {}
    files: list[UploadedFile] = []
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise ProblemError("validation_failed", "A nested multipart body is not a submission field.")
            name = part.name or ""
            if name == "file":
                if len(files) >= max_files:
                    raise ProblemError(
                        "validation_failed",
                        "Send one `file` field." if max_files == 1 else f"Send at most {max_files} `file` fields.",
                    )
                file_name = part.filename or ""
                if not file_name:
                    raise ProblemError("validation_failed", "The `file` field needs a file name (solution.cu, .py).")
                check_declared(file_name, 0)  # the name and extension, before the body is read
                data = await _read_limited(part, MAX_SOURCE_BYTES)
                if data is None:
                    limit = MAX_SOURCE_BYTES // 1024
                    raise ProblemError(
                        "payload_too_large", f"`{file_name}` is over {limit} KiB; the limit is {limit} KiB."
                    )
                files.append(UploadedFile(file_name, data))
            elif name in TEXT_FIELDS:
                if name in fields:
                    raise ProblemError("validation_failed", f"Send the field `{name}` once.")
                fields[name] = await _text(part, name)
            else:
                raise ProblemError(
                    "validation_failed",
                    f"`{name}` is not a field of a submission; send problem, file and optionally "
                    "dtype, mode, gpu, profile_case, world_size.",
                )
    except (ValueError, HttpProcessingError) as exc:
        # aiohttp's multipart parser: a body that is not what its header says, or a part whose headers are not
        # HTTP headers (a field name with control characters).
        reason = exc.message if isinstance(exc, HttpProcessingError) else str(exc)
        raise ProblemError("bad_request", f"The multipart body cannot be read ({reason[:200]}).") from exc
    if not fields.get("problem"):
        raise ProblemError("validation_failed", "The field `problem` (a problem's slug) is missing.")
    if not files:
        raise ProblemError("validation_failed", "The field `file` (the solution's source) is missing.")
    return fields, files


async def read_form(request: web.Request) -> SubmissionForm:
    """The submission's fields, each checked for what can be checked before the core sees it."""
    fields, files = await read_parts(request)
    return SubmissionForm(
        problem=fields["problem"],
        file_name=files[0].file_name,
        data=files[0].data,
        dtype=parse_dtype(fields.get("dtype") or DEFAULT_DTYPE),
        mode=parse_mode(fields.get("mode") or DEFAULT_MODE),
        gpu=fields.get("gpu") or None,
        profile_case=_case(fields.get("profile_case")),
        world_size=_world_size(fields.get("world_size")),
    )


async def _text(part: BodyPartReader, name: str) -> str:
    raw = await _read_limited(part, MAX_FIELD_BYTES)
    if raw is None:
        raise ProblemError("validation_failed", f"The field `{name}` is longer than {MAX_FIELD_BYTES} bytes.")
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ProblemError("validation_failed", f"The field `{name}` is not UTF-8 text.") from None


def _case(text: str | None) -> int | None:
    if not text:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise ProblemError("validation_failed", f"`profile_case` is {text!r}; give a test case's index from 0.")
    return int(text)


def _world_size(text: str | None) -> int:
    if not text:
        return 1
    if not text.isascii() or not text.isdigit() or len(text) > 2:
        raise ProblemError(
            "validation_failed", f"`world_size` is {text!r}; give the number of ranks, one the problem declares."
        )
    return int(text)


def idempotency_key(request: web.Request) -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    key = key.strip()
    if not key or len(key) > MAX_IDEMPOTENCY_KEY or not key.isprintable():
        raise ProblemError(
            "validation_failed", f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} printable characters."
        )
    return key


async def post_submission(request: web.Request) -> web.Response:
    user = await authenticate(request, "submit")
    key = idempotency_key(request)
    form = await read_form(request)
    service = request.app[SERVICE]
    request.app[POOL_TYPES].types = await fleet_store.pool_types(service.pool)
    ticket = await service.submit(
        user_external_id=user.external_id,
        user_name=user.display_name,
        slug=form.problem,
        file_name=form.file_name,
        data=form.data,
        dtype=form.dtype,
        mode=form.mode,
        gpu=form.gpu,
        # The key is the caller's: the API's keys live apart from Discord's interaction ids.
        client_token=f"api:{key}" if key is not None else None,
        profile_case=form.profile_case,
        world_size=form.world_size,
    )
    accepted = await accepted_of(service, ticket)
    return web.json_response(text=accepted.model_dump_json(), status=202, headers={"Location": accepted.result})


async def accepted_of(service: ArenaService, ticket: SubmitTicket) -> SubmissionAccepted:
    """What the API answers for a submission it took."""
    sub_id = ticket.submission_id
    path = f"/v1/submissions/{sub_id}"
    return SubmissionAccepted(
        id=sub_id,
        problem=ticket.slug,
        file_name=ticket.file_name,
        language=ticket.language,
        dtype=ticket.dtype,
        data_type=ticket.data_type,
        mode=ticket.mode,
        gpu_type=ticket.gpu_type,
        queue_position=ticket.receipt.queue_position,
        start_in_s=ticket.start_in_s,
        duplicate=ticket.receipt.duplicate,
        events=f"{path}/events",
        result=path,
        contests=await contests_of(service.pool, sub_id, ticket.mode),
    )


def register(app: web.Application, pool: asyncpg.Pool, settings: ApiSettings) -> None:
    """Add the route, with the service it submits through."""
    pool_types = _PoolTypes()
    app[POOL_TYPES] = pool_types
    app[SERVICE] = ArenaService(pool, settings.arena, pool_types)
    app.router.add_post("/v1/submissions", post_submission)
    app.on_shutdown.append(_finish_submissions)


async def _finish_submissions(app: web.Application) -> None:
    await app[SERVICE].aclose()


def idempotency_parameter(description: str) -> dict[str, Any]:
    """The optional `Idempotency-Key` header of a route that stores what it is sent, as OpenAPI names it."""
    return {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "maxLength": MAX_IDEMPOTENCY_KEY},
        "description": description,
    }


def multipart_schema(file: dict[str, Any], *, profile: bool = True) -> dict[str, Any]:
    """The form a submission is sent as, with this `file` field (one source, or a batch's several)."""
    modes = [m for m in MODES if profile or m != "profile"]
    properties: dict[str, Any] = {
        "problem": {"type": "string", "description": "the problem's slug"},
        "file": file,
        "dtype": {"type": "string", "enum": list(DTYPES), "default": DEFAULT_DTYPE},
        "mode": {"type": "string", "enum": modes, "default": DEFAULT_MODE},
        "gpu": {"type": "string", "description": "the GPU pool (default: the only one)"},
    }
    if profile:
        properties["profile_case"] = {"type": "integer", "minimum": 0, "description": "with mode profile: the case"}
        # Only a single submission: a batch runs on one device, and refuses any other world size.
        properties["world_size"] = {
            "type": "integer",
            "minimum": 1,
            "maximum": 99,
            "default": 1,
            "description": "a distributed problem's ranks, one of the world sizes it declares: the job runs on the "
            "pool's slots of that many ranks (rank pool `<gpu>x<N>`) and lands on that world size's board; 1 for "
            "any other problem",
        }
    return {"type": "object", "required": ["problem", "file"], "properties": properties}


def openapi_paths() -> dict[str, Any]:
    form = multipart_schema({"type": "string", "format": "binary", "description": "the source: a .cu or .py file"})
    return {
        "/v1/submissions": {
            "post": {
                "summary": "Submit a solution (scope submit); stored and queued before the answer",
                "security": [{"bearer": []}],
                "parameters": [
                    idempotency_parameter(
                        "a retry with the same key and body answers the first submission; the same key with another "
                        "body is refused (409 idempotency_conflict)"
                    )
                ],
                "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": form}}},
                "responses": {
                    "202": {
                        "description": "accepted and queued",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/SubmissionAccepted"}}
                        },
                    },
                    **openapi_problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
                },
            }
        }
    }
