"""The public API's read routes that `arena mcp` needs and `arena.server_client.ArenaServer` has no method for: the
problems, one problem's interface, one page of a board (`api.public_read` serves them, `docs/api.md` lists them).

Each call goes through the server's one request path (`ArenaServer._call`), so a refusal arrives as the same
`ServerError` with the API's stable code as every other call of the CLI.
"""

from __future__ import annotations

import urllib.parse

from api.read_models import Leaderboard, ProblemDetail, ProblemList
from arena.server_client import ArenaServer


def _segment(text: str) -> str:
    # A slug is one path segment: a `/` or `?` in what a caller typed must not reach another route.
    return urllib.parse.quote(text, safe="")


def _query(**values: str | int | None) -> dict[str, str]:
    return {name: str(value) for name, value in values.items() if value is not None and value != ""}


async def problem_list(server: ArenaServer) -> ProblemList:
    """Every problem the server lists now."""
    return await server._call(ProblemList, "GET", "/v1/problems")


async def problem_detail(server: ArenaServer, slug: str, dtype: str | None = None) -> ProblemDetail:
    """One problem's full interface in one dtype (the problem's first when None)."""
    return await server._call(ProblemDetail, "GET", f"/v1/problems/{_segment(slug)}", params=_query(dtype=dtype))


async def leaderboard_page(
    server: ArenaServer,
    slug: str,
    *,
    gpu_type: str | None = None,
    dtype: str | None = None,
    language: str | None = None,
    page: int = 1,
) -> Leaderboard:
    """One page of a problem's board: the one asked for, else the fullest that fits what was given."""
    params = _query(gpu_type=gpu_type, dtype=dtype, language=language, page=page)
    return await server._call(Leaderboard, "GET", f"/v1/leaderboards/{_segment(slug)}", params=params)
