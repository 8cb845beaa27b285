"""RFC 9457 problem details for the public API: every refusal of a route under `/v1` that users call.

A refusal is `application/problem+json`:

    {"type": "urn:kernel-arena:problem:token_expired", "title": "Token expired", "status": 401,
     "detail": "This token expired at 2026-12-01 10:00 UTC; create a new one with /token create.",
     "code": "token_expired"}

`code` is stable: clients (the CLI's `--json`, agents) branch on it, never on `title` or `detail`, which are for
people. `PROBLEM_CODES` is the one table of codes, their status and their title; `docs/api.md` lists it.

Routes raise `ProblemError(code, detail)`; `problem_middleware` renders it, and turns every other failure of a
public route into a problem too: aiohttp's own refusals (404, 405, 413), a body that does not validate (422),
the store unreachable (503), and anything unexpected (500, logged here with its traceback, which never reaches
the caller). The runners' routes (`/v1/runners/...`) and the probes (`/v1/health`, `/v1/ready`) keep their own
`{"error": {...}}` answers.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import RateLimitedError, UserFacingError
from core.store.outage import STORE_OUTAGE_ERRORS

log = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_PREFIX = "urn:kernel-arena:problem:"


@dataclass(frozen=True)
class ProblemCode:
    status: int
    title: str


# The stable codes, grouped by status. Add codes; never rename or reuse one (clients branch on them).
PROBLEM_CODES: dict[str, ProblemCode] = {
    # 400: the request cannot be read at all
    "bad_request": ProblemCode(400, "Bad request"),
    # 401: who is calling is unknown
    "token_missing": ProblemCode(401, "Token missing"),
    "token_invalid": ProblemCode(401, "Token invalid"),
    "token_expired": ProblemCode(401, "Token expired"),
    "token_revoked": ProblemCode(401, "Token revoked"),
    # 403: the caller is known and may not do this
    "insufficient_scope": ProblemCode(403, "Insufficient scope"),
    "banned": ProblemCode(403, "Banned"),
    "https_required": ProblemCode(403, "HTTPS required"),
    "forbidden": ProblemCode(403, "Forbidden"),
    # 404: nothing at this address
    "not_found": ProblemCode(404, "Not found"),
    "problem_not_found": ProblemCode(404, "Problem not found"),
    "problem_disabled": ProblemCode(404, "Problem disabled"),
    "contest_not_found": ProblemCode(404, "Contest not found"),
    "submission_not_found": ProblemCode(404, "Submission not found"),
    "user_not_found": ProblemCode(404, "User not found"),
    "nothing_to_compare": ProblemCode(404, "Nothing to compare"),
    # 405, 409
    "method_not_allowed": ProblemCode(405, "Method not allowed"),
    "conflict": ProblemCode(409, "Conflict"),
    "submission_finished": ProblemCode(409, "Submission already finished"),
    "idempotency_conflict": ProblemCode(409, "Idempotency key reused"),
    # 413, 415: the body
    "payload_too_large": ProblemCode(413, "Payload too large"),
    "unsupported_media_type": ProblemCode(415, "Unsupported media type"),
    # 422: the request is readable and its content is refused
    "validation_failed": ProblemCode(422, "Validation failed"),
    "bad_upload": ProblemCode(422, "Upload refused"),
    "unsupported_dtype": ProblemCode(422, "Unsupported dtype"),
    "invalid_option": ProblemCode(422, "Invalid option"),
    "not_profiled": ProblemCode(422, "Not profiled"),
    "profiles_not_comparable": ProblemCode(422, "Profiles not comparable"),
    # 429: come back later (always with Retry-After)
    "rate_limited": ProblemCode(429, "Rate limited"),
    "auth_rate_limited": ProblemCode(429, "Too many failed authentications"),
    # 5xx: the service's fault
    "internal": ProblemCode(500, "Internal error"),
    "unavailable": ProblemCode(503, "Service unavailable"),
}

# aiohttp's own refusals (no route, wrong method, body over client_max_size), by status.
_HTTP_STATUS_CODES = {
    400: "bad_request",
    401: "token_missing",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "rate_limited",
}


class Problem(BaseModel):
    """An RFC 9457 problem details object, as every refusal of the public API answers (`application/problem+json`).
    `code` is stable: branch on it. `retry_after_s` comes with every 429, as the `Retry-After` header does."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str = Field(description="a URI naming the problem type: `urn:kernel-arena:problem:<code>`")
    title: str = Field(description="the problem type in a few words, the same for every occurrence")
    status: int = Field(ge=400, le=599, description="the HTTP status")
    detail: str = Field(description="what went wrong this time and what to do about it, for people")
    code: str = Field(description="the stable, machine-readable code (`docs/api.md` lists them)")
    retry_after_s: int | None = Field(None, ge=0, description="with 429: seconds until a retry can succeed")


class ProblemError(Exception):
    """A refusal of the public API: raise it from a route; `problem_middleware` answers it as problem details.

    `code` must be one of PROBLEM_CODES. `retry_after_s` is required with a 429 code (sent as `Retry-After`)."""

    def __init__(self, code: str, detail: str, *, retry_after_s: float | None = None) -> None:
        if code not in PROBLEM_CODES:
            raise ValueError(f"{code!r} is not a problem code; add it to api.problems_json.PROBLEM_CODES first")
        if PROBLEM_CODES[code].status == 429 and retry_after_s is None:
            raise ValueError(f"a {code!r} problem (429) needs retry_after_s")
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.retry_after_s = retry_after_s

    @property
    def status(self) -> int:
        return PROBLEM_CODES[self.code].status


def problem_body(code: str, detail: str, *, retry_after_s: float | None = None) -> Problem:
    """The problem details for `code` (one of PROBLEM_CODES) with this detail."""
    entry = PROBLEM_CODES[code]
    return Problem(
        type=PROBLEM_TYPE_PREFIX + code,
        title=entry.title,
        status=entry.status,
        detail=detail,
        code=code,
        retry_after_s=None if retry_after_s is None else _whole_seconds(retry_after_s),
    )


def _whole_seconds(seconds: float) -> int:
    # Retry-After is whole seconds; rounding down would invite a retry that is refused again.
    return max(1, math.ceil(seconds)) if seconds > 0 else 0


def problem_response(
    code: str, detail: str, *, retry_after_s: float | None = None, headers: dict[str, str] | None = None
) -> web.Response:
    """An `application/problem+json` response for `code`; a 429 carries `Retry-After`."""
    body = problem_body(code, detail, retry_after_s=retry_after_s)
    all_headers = {"Cache-Control": "no-store", **(headers or {})}
    if body.retry_after_s is not None:
        all_headers["Retry-After"] = str(body.retry_after_s)
    if body.status == 401:
        # RFC 6750: a 401 names the scheme it wants.
        all_headers.setdefault("WWW-Authenticate", 'Bearer realm="arena"')
    return web.Response(
        text=body.model_dump_json(exclude_none=True),
        status=body.status,
        content_type=PROBLEM_CONTENT_TYPE,
        headers=all_headers,
    )


def problem_from_exception(exc: BaseException) -> ProblemError | None:
    """The problem a known failure is answered with, or None for an unexpected one (a 500, logged by the caller)."""
    if isinstance(exc, ProblemError):
        return exc
    if isinstance(exc, RateLimitedError):
        return ProblemError("rate_limited", exc.message, retry_after_s=exc.retry_after_s)
    if isinstance(exc, UserFacingError):
        return ProblemError(exc.code, exc.message)  # each error type names its code (core.errors)
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]]
        return ProblemError("validation_failed", "The request is invalid. " + "; ".join(parts))
    if isinstance(exc, web.HTTPException) and exc.status >= 400:
        code = _HTTP_STATUS_CODES.get(exc.status, "bad_request" if exc.status < 500 else "internal")
        if code == "rate_limited":
            return ProblemError(code, _http_detail(exc), retry_after_s=_retry_after(exc))
        return ProblemError(code, _http_detail(exc))
    return None


def _http_detail(exc: web.HTTPException) -> str:
    if exc.status == 404:
        return "Nothing is at this address; GET /v1/openapi.json lists the routes."
    if exc.status == 405:
        allowed = ", ".join(sorted(getattr(exc, "allowed_methods", ())))
        return f"This route does not take this method; it takes {allowed}."
    if exc.status == 413:
        return "The request body is too large."
    text = exc.text or ""
    # aiohttp's default text is "<status>: <reason>"; a route's own text says more.
    return text if text and not text.startswith(f"{exc.status}:") else exc.reason


def _retry_after(exc: web.HTTPException) -> float:
    try:
        return float(exc.headers.get("Retry-After", "1"))
    except ValueError:
        return 1.0


# The routes of machines under /v1 (probes, the runners' protocol): they keep the `{"error": {...}}` answers.
_MACHINE_PATHS = ("/v1/health", "/v1/ready")
_MACHINE_PREFIXES = ("/v1/runners",)


def is_public_path(path: str) -> bool:
    """Whether a path belongs to the public API (problem details) rather than the runners' protocol or probes."""
    return path.startswith("/v1/") and path not in _MACHINE_PATHS and not path.startswith(_MACHINE_PREFIXES)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every refusal of a public route becomes problem details; other paths pass through unchanged."""
    if not is_public_path(request.path):
        return await handler(request)
    try:
        return await handler(request)
    except STORE_OUTAGE_ERRORS:
        log.warning("%s %s: the store is unreachable", request.method, request.path, exc_info=True)
        return problem_response("unavailable", "The arena's store is unreachable; try again shortly.")
    except Exception as exc:
        if isinstance(exc, web.HTTPException) and exc.status < 400:
            raise
        problem = problem_from_exception(exc)
        if problem is None:
            log.exception("%s %s failed", request.method, request.path)
            return problem_response("internal", "The API failed on this request; the error is in its log.")
        return problem_response(problem.code, problem.detail, retry_after_s=problem.retry_after_s)


def openapi_problem_responses(*statuses: int) -> dict[str, Any]:
    """OpenAPI `responses` entries for these refusal statuses, each a `Problem` as problem+json."""
    entry = {
        "description": "problem details (RFC 9457); `code` is stable",
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    return {str(status): entry for status in statuses}
