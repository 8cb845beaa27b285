"""Profile diffs through the public API (scope read):

- `GET /v1/profiles/diff?a=&b=`: `ProfileDiff`, run `a`'s profile beside run `b`'s, kernel by kernel, with the
  change of every figure and of the totals (`core.profile_diff`). Without `b`, B is the caller's fastest other
  profile of the same problem, GPU type, dtype and case, else a board leader's profile of code its contest revealed
  (`b_chosen` says which); `404 nothing_to_compare` when there is neither.

A run is the caller's: someone else's reads as not found (`404 submission_not_found`), unless the code it ran is
revealed. Two runs that cannot be compared are `422`: `not_profiled` (not of mode `profile`, or no profile stored
yet) and `profiles_not_comparable` (other problems, other GPU types); each detail says what to fix.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from aiohttp import web

from api.problems_json import ProblemError, openapi_problem_responses
from api.user_auth import authenticate
from core.profile_diff import profile_diff

POOL = web.AppKey("profiles_pool", asyncpg.Pool)
MAX_ID = 2**63 - 1


def _run_id(request: web.Request, name: str, *, required: bool) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        if required:
            raise ProblemError("validation_failed", f"Give `{name}`: the id of a profiled run (mode `profile`).")
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or not 1 <= int(raw) <= MAX_ID:
        raise ProblemError("invalid_option", f"`{name}` is {raw[:32]!r}; give a submission id, a whole number.")
    return int(raw)


async def get_diff(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    a = _run_id(request, "a", required=True)
    b = _run_id(request, "b", required=False)
    assert a is not None
    found = await profile_diff(request.app[POOL], user.user_id, a, b)
    return web.json_response(text=found.model_dump_json(), headers={"Cache-Control": "no-store"})


def register(app: web.Application, pool: asyncpg.Pool) -> None:
    app[POOL] = pool
    app.router.add_get("/v1/profiles/diff", get_diff)


def _run_parameter(name: str, required: bool, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
        "description": description,
    }


def openapi_paths() -> dict[str, Any]:
    answer = {"application/json": {"schema": {"$ref": "#/components/schemas/ProfileDiff"}}}
    return {
        "/v1/profiles/diff": {
            "get": {
                "summary": "Two profiled runs of one problem and GPU type side by side, kernel by kernel (scope read)",
                "security": [{"bearer": []}],
                "parameters": [
                    _run_parameter("a", True, "the run compared from (yours, or revealed code's)"),
                    _run_parameter("b", False, "the run compared to (default: your fastest other, else a leader's)"),
                ],
                "responses": {
                    "200": {"description": "the diff", "content": answer},
                    **openapi_problem_responses(401, 403, 404, 422, 429, 503),
                },
            }
        }
    }
