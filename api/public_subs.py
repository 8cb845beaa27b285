"""The caller's submissions through the public API (scope read):

- `GET /v1/submissions/{id}`: the submission and, once its run ended, its result;
- `GET /v1/submissions/{id}/code`: its source;
- `GET /v1/submissions?problem=&before=&limit=`: the caller's submissions, newest first, a page at a time;
- `DELETE /v1/submissions/{id}` (scope submit): its author withdraws it before it finished, as Ctrl-C on a local
  `arena submit` does (`core.submit.local.withdraw_submission`): its job ends `failed`, the submission `failed` with
  the error code `cancelled`, and no dispatcher runs it again. A submission that had finished is `409
  submission_finished`.

A ranked run on a problem that a contest holds carries `contests`: what it counts for, or why it counts for none
(`core.contests.entry.submission_entries`, the line Discord and the CLI print).

A submission is its author's. Someone else's reads as not found (ids reveal nothing), unless it is contest code
that the reveal rules open to everyone (`core.browse.submission_detail`, `core.contests.code_revealed`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import asyncpg
from aiohttp import web

from api.problems_json import ProblemError, openapi_problem_responses
from api.submission_models import (
    SubmissionCancelled,
    SubmissionCode,
    SubmissionPage,
    SubmissionSummary,
    SubmissionView,
)
from api.user_auth import authenticate
from core.browse import submission_detail
from core.contests.entry import ContestEntries, submission_entries
from core.problems import require_problem
from core.store import jobs, submission_feed
from core.submit.intake import get_submission as stored_submission
from core.submit.local import withdraw_submission

POOL = web.AppKey("subs_pool", asyncpg.Pool)
DEFAULT_PAGE = 20
MAX_PAGE = 100
MAX_ID = 2**63 - 1


def submission_id(request: web.Request) -> int:
    """The `{submission_id}` of the path; anything but a whole number names no submission."""
    raw = request.match_info["submission_id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise ProblemError("submission_not_found", f"There is no submission {raw!r}; ids are whole numbers.")
    return int(raw)


def _whole(request: web.Request, name: str, low: int, high: int) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or not low <= int(raw) <= high:
        raise ProblemError("invalid_option", f"`{name}` is {raw!r}; give a whole number from {low} to {high}.")
    return int(raw)


def _json(model: Any, status: int = 200) -> web.Response:
    return web.json_response(text=model.model_dump_json(), status=status, headers={"Cache-Control": "no-store"})


CANCELLED_THROUGH_API = "Cancelled by its author through the API before it finished; it will not run again."


async def contests_of(pool: asyncpg.Pool, sub_id: int, mode: str) -> ContestEntries | None:
    """What a ranked run counts for now (None: not ranked, or no contest holds its problem)."""
    return await submission_entries(pool, sub_id, datetime.now(UTC)) if mode == "ranked" else None


async def get_submission(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    pool = request.app[POOL]
    detail = await submission_detail(pool, submission_id(request), user.external_id)
    summary = SubmissionSummary.of(detail.submission)
    contests = await contests_of(pool, detail.submission.id, detail.submission.mode)
    return _json(
        SubmissionView(**summary.model_dump(), owner=detail.owner_name, result=detail.result, contests=contests)
    )


async def cancel_submission(request: web.Request) -> web.Response:
    user = await authenticate(request, "submit")
    pool = request.app[POOL]
    sub_id = submission_id(request)
    sub = await stored_submission(pool, sub_id)
    if sub.user_id != user.user_id:
        # Another's submission reads as not found, as every route of a submission answers it.
        raise ProblemError(
            "submission_not_found", f"You have no submission #{sub_id}; GET /v1/submissions lists yours."
        )
    found = await jobs.jobs_of(pool, sub_id)
    if not found or not await withdraw_submission(pool, sub_id, found[-1].id, CANCELLED_THROUGH_API):
        raise ProblemError(
            "submission_finished",
            f"Submission #{sub_id} had already finished ({sub.status}); GET /v1/submissions/{sub_id} reads its result.",
        )
    now = await stored_submission(pool, sub_id)
    return _json(SubmissionCancelled(id=sub_id, cancelled=True, status=now.status))


async def get_code(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    detail = await submission_detail(request.app[POOL], submission_id(request), user.external_id)
    sub = detail.submission
    return _json(
        SubmissionCode(
            id=sub.id, owner=detail.owner_name, file_name=sub.file_name, language=sub.language, source=detail.source
        )
    )


async def list_submissions(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    pool = request.app[POOL]
    limit = _whole(request, "limit", 1, MAX_PAGE) or DEFAULT_PAGE
    before = _whole(request, "before", 1, MAX_ID)
    slug = request.query.get("problem")
    problem_id = (await require_problem(pool, slug.strip())).problem_id if slug else None
    # One more than the page: whether an older page exists, without a count.
    rows = await submission_feed.page_of_user(
        pool, user.user_id, before_id=before, problem_id=problem_id, limit=limit + 1
    )
    page = rows[:limit]
    more = len(rows) > limit
    return _json(
        SubmissionPage(items=[SubmissionSummary.of(s) for s in page], next_before=page[-1].id if more else None)
    )


def register(app: web.Application, pool: asyncpg.Pool) -> None:
    app[POOL] = pool
    app.router.add_get("/v1/submissions", list_submissions)
    app.router.add_get("/v1/submissions/{submission_id}", get_submission)
    app.router.add_delete("/v1/submissions/{submission_id}", cancel_submission)
    app.router.add_get("/v1/submissions/{submission_id}/code", get_code)


def _ok(name: str, description: str) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{name}"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


SUBMISSION_ID = {"name": "submission_id", "in": "path", "required": True, "schema": {"type": "integer"}}


def openapi_paths() -> dict[str, Any]:
    refusals = openapi_problem_responses(401, 403, 404, 429, 503)
    bearer = [{"bearer": []}]
    return {
        "/v1/submissions": {
            "get": {
                "summary": "The caller's submissions, newest first, a page at a time (scope read)",
                "security": bearer,
                "parameters": [
                    {"name": "problem", "in": "query", "required": False, "schema": {"type": "string"}},
                    {
                        "name": "before",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1},
                        "description": "the previous page's `next_before`",
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": DEFAULT_PAGE},
                    },
                ],
                "responses": {"200": _ok("SubmissionPage", "a page"), **refusals, **openapi_problem_responses(422)},
            }
        },
        "/v1/submissions/{submission_id}": {
            "parameters": [SUBMISSION_ID],
            "get": {
                "summary": "A submission and its result (scope read; the author's, or revealed contest code)",
                "security": bearer,
                "responses": {"200": _ok("SubmissionView", "the submission"), **refusals},
            },
            "delete": {
                "summary": "Withdraw your submission before it finished (scope submit): it will not run again",
                "security": bearer,
                "responses": {
                    "200": _ok("SubmissionCancelled", "withdrawn"),
                    **refusals,
                    **openapi_problem_responses(409),
                },
            },
        },
        "/v1/submissions/{submission_id}/code": {
            "parameters": [SUBMISSION_ID],
            "get": {
                "summary": "A submission's source (scope read; the author's, or revealed contest code)",
                "security": bearer,
                "responses": {"200": _ok("SubmissionCode", "the source"), **refusals},
            },
        },
    }
