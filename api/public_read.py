"""The public API's read routes (GET, scope `read`), answered with the models of `api.read_models`:

- `/v1/problems`: every problem listed now; `/v1/problems/{slug}?dtype=`: one problem's full interface
  (signatures, parameters, shapes per case, the check, FLOP and byte formulas, starters), what `arena show` prints;
- `/v1/leaderboards/{slug}?gpu_type=&dtype=&language=&method=&page=&page_size=`: one page of a board;
- `/v1/contests`, `/v1/contests/{slug}?phase=contest|upsolve`: the contests, one with its board;
- `/v1/ratings?page=&page_size=`: the rating table;
- `/v1/me/quota`: the caller's buckets and queued jobs, what `/quota` shows.

What is public follows `core.public`, the web board's rules: a problem a contest hides until its start is neither
listed nor shown (it reads as unknown), a contest shows no board before its start, banned players are left out.

Kept as one module: the public read routes share one visibility rule (core.public) and one paging scheme; each route
is a few lines over them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import asyncpg
from aiohttp import web

from api import read_models as m
from api.problems_json import ProblemError, openapi_problem_responses
from api.settings import ApiSettings
from api.user_auth import authenticate
from core import public
from core.browse import ProblemEntry, get_problem_entry, list_problems
from core.contests import ContestBoard, ContestView, hidden_problem_ids
from core.contests.views import rating_table
from core.errors import UnknownProblemError
from core.leaderboard import get_rank, older_protocol
from core.problems import SLUG, shown
from core.quota import user_queue, user_quota
from core.store.leaderboard import ANY_LANGUAGE, BoardRow
from core.submit.distributed import board_world_size
from problems.base import DTYPES, Problem
from problems.catalog import CatalogError, data_types, describe, static_problem
from problems.registry import builtin_problems, canonical_slug
from problems.starter import STARTER_LANGUAGES, generate_starter, param_summary, starter_filename, tolerance_summary
from runner.protocol import protocol_version

log = logging.getLogger(__name__)

POOL = web.AppKey("read_pool", asyncpg.Pool)
SETTINGS = web.AppKey("read_settings", ApiSettings)
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
MAX_PAGE = public.MAX_PAGE_NUMBER + 1


def _json(model: Any) -> web.Response:
    return web.json_response(text=model.model_dump_json(), headers={"Cache-Control": "no-store"})


def _whole(request: web.Request, name: str, low: int, high: int, default: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or not low <= int(raw) <= high:
        raise ProblemError("invalid_option", f"`{name}` is {raw[:32]!r}; give a whole number from {low} to {high}.")
    return int(raw)


def _text(request: web.Request, name: str) -> str | None:
    raw = request.query.get(name)
    return raw if raw else None


# -- problems ---------------------------------------------------------------------------------------------------


def _summary(entry: ProblemEntry) -> m.ProblemSummary:
    stored, info = entry.stored, entry.info
    return m.ProblemSummary(
        slug=stored.slug,
        title=stored.title,
        category=entry.category,
        difficulty=entry.difficulty,
        version=stored.version,
        dtypes=list(stored.dtypes),
        data_types=dict(stored.data_types),
        score_metric=stored.score_metric,  # type: ignore[arg-type]
        enabled=stored.enabled,
        aliases=list(info.aliases) if info is not None else [],
    )


async def get_problems(request: web.Request) -> web.Response:
    await authenticate(request, "read")
    entries = await list_problems(request.app[POOL], now=datetime.now(UTC))
    return _json(m.ProblemList(problems=[_summary(e) for e in entries]))


async def _listed_entry(pool: asyncpg.Pool, slug: str, now: datetime) -> ProblemEntry:
    """The problem unless a contest hides it at `now` (then it reads as unknown). While any problem is hidden, an
    unknown slug gets no suggestion, which could name a hidden one: the web board's rule (`core.public`)."""
    try:
        return await get_problem_entry(pool, slug, now=now)
    except UnknownProblemError:
        if await hidden_problem_ids(pool, now):
            raise UnknownProblemError(
                f"There is no problem called `{shown(slug)}`; GET /v1/problems lists them."
            ) from None
        raise


def _problem_object(slug: str, source: str | None) -> Problem:
    """The problem's class for its interface: the built-in's, or one read statically from its stored module."""
    if source is not None:
        return static_problem(source)
    problem = builtin_problems().get(canonical_slug(slug))
    if problem is None:
        raise CatalogError(f"`{slug}` is neither built in nor stored with its module")
    return problem


def _cases(problem: Problem, dtype: str, kind: str, builtin: bool) -> list[m.CaseShape]:
    if not builtin:
        return []  # a stored module's cases come from its code, which only runners execute
    cases = problem.generate_test_cases(dtype, kind)  # type: ignore[arg-type]
    out = []
    for case in cases:
        shapes = problem.buffer_shapes(case) or {}
        out.append(
            m.CaseShape(
                name=case["name"],
                dims=[int(d) for d in case["dims"]],
                shapes={name: [int(d) for d in shape] for name, shape in shapes.items()},
                gflop=problem.get_flops(case) / 1e9,
                megabytes=problem.get_bytes(case, dtype) / 1e6,  # type: ignore[arg-type]
            )
        )
    return out


def _signature(starter: str, prefix: str) -> str:
    return next(line for line in starter.splitlines() if line.startswith(prefix)).rstrip(" {:")


@lru_cache(maxsize=256)
def _interface(slug: str, version: int, source: str | None, dtype: str) -> m.ProblemDetail:
    """A problem version's interface in one dtype: the same for every caller and never changing, so it is built
    once per process (callers copy it, never change it). `enabled` is the caller's to fill in."""
    problem = _problem_object(slug, source)
    info = describe(slug, source)
    builtin = source is None
    starters = []
    for language in STARTER_LANGUAGES:
        try:
            text = generate_starter(problem, language, dtype)  # type: ignore[arg-type]
        except (ValueError, CatalogError) as exc:
            log.warning("no %s starter for %s (%s): %s", language, slug, dtype, exc)
            continue
        starters.append(m.Starter(language=language, file_name=starter_filename(problem, language), text=text))
    by_language = {s.language: s.text for s in starters}
    exact = all(e.startswith(("int", "uint", "size")) for e in problem.output_elements(dtype))  # type: ignore[arg-type]
    tolerance = problem.tolerances.get(dtype)  # type: ignore[call-overload]
    metric = "GFLOPS" if problem.score_metric == "gflops" else "GB/s"
    detail = m.ProblemDetail(
        slug=slug,
        title=info.title,
        version=version,
        description=info.description,
        category=info.category,
        tags=list(info.tags),
        difficulty=info.difficulty,
        dtypes=list(problem.dtypes),
        aliases=list(info.aliases),
        enabled=True,
        score_metric=problem.score_metric,  # type: ignore[arg-type]
        ranked_by=f"geometric mean of {metric} over the GPU cases (higher is better)",
        dtype=dtype,
        data_type=data_types(problem, dtype),  # type: ignore[arg-type]
        cuda_signature=_signature(by_language["cuda"], 'extern "C"') if "cuda" in by_language else "",
        python_signature=_signature(by_language["python"], "def solution") if "python" in by_language else "",
        parameters=[
            m.ParameterInfo(
                name=p.name,
                role=p.role,
                element_type=p.scalar_type if p.role == "scalar" else p.element_type(dtype),  # type: ignore[arg-type]
                summary=param_summary(p, dtype),  # type: ignore[arg-type]
            )
            for p in problem.ordered_parameters()
        ],
        flops_formula=problem.flops_formula,
        bytes_formula=problem.bytes_formula,
        check=m.CheckInfo(
            exact=exact,
            atol=None if exact or tolerance is None else tolerance.atol,
            rtol=None if exact or tolerance is None else tolerance.rtol,
            summary=tolerance_summary(problem, dtype),  # type: ignore[arg-type]
        ),
        gpu_cases=_cases(problem, dtype, "gpu", builtin),
        cpu_cases=_cases(problem, dtype, "cpu", builtin),
        starters=starters,
    )
    return detail


async def get_problem(request: web.Request) -> web.Response:
    await authenticate(request, "read")
    slug = request.match_info["slug"]
    entry = await _listed_entry(request.app[POOL], slug, datetime.now(UTC))
    stored = entry.stored
    dtype = _text(request, "dtype") or stored.dtypes[0]
    if dtype not in stored.dtypes:
        known = "" if dtype in DTYPES else " is not a dtype;"
        raise ProblemError(
            "unsupported_dtype", f"`{dtype[:32]}`{known} `{stored.slug}` takes {', '.join(stored.dtypes)}."
        )
    try:
        interface = await asyncio.to_thread(_interface, stored.slug, stored.version, stored.source, dtype)
    except CatalogError as exc:
        log.warning("problem %s v%d cannot be described: %s", stored.slug, stored.version, exc)
        raise ProblemError("problem_not_found", f"`{stored.slug}` cannot be described now; try again later.") from exc
    return _json(interface.model_copy(update={"enabled": stored.enabled}))


# -- leaderboards -----------------------------------------------------------------------------------------------


def _entry(row: BoardRow) -> m.BoardEntry:
    return m.BoardEntry(
        rank=row.rank,
        user=row.display_name,
        user_id=row.user_id,
        submission_id=row.submission_id,
        language=row.language,
        score=row.score,
        submitted_at=row.submitted_at,
        protocol=row.protocol,
        older_protocol=older_protocol(row),
    )


async def get_leaderboard(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    pool = request.app[POOL]
    page = _whole(request, "page", 1, MAX_PAGE, 1)
    page_size = _whole(request, "page_size", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE)
    language = _text(request, "language") or ANY_LANGUAGE
    found = await public.problem_board(
        pool,
        request.match_info["slug"],
        now=datetime.now(UTC),
        gpu_type=_text(request, "gpu_type"),
        dtype=_text(request, "dtype"),
        language=language,
        method=_text(request, "method"),
        page=page - 1,
        page_size=page_size,
    )
    stored = found.entry.stored
    board = found.page.board if found.page is not None else None
    caller = None
    if board is not None and board.method is not None and found.gpu_type is not None:
        own = await get_rank(
            pool, stored.slug, found.gpu_type, found.dtype, user.external_id, language=language, method=board.method
        )
        caller = _entry(own) if own is not None else None
    return _json(
        m.Leaderboard(
            problem=stored.slug,
            problem_title=stored.title,
            version=stored.version,
            gpu_type=found.gpu_type,
            dtype=found.dtype,
            language=found.language,
            method=board.method if board is not None else None,
            world_size=board_world_size(stored.slug, found.gpu_type) if found.gpu_type is not None else 1,
            unit="GFLOPS" if stored.score_metric == "gflops" else "GB/s",
            page=page,
            page_size=page_size,
            has_next=found.page.has_next if found.page is not None else False,
            entries=[_entry(r) for r in board.rows] if board is not None else [],
            caller=caller,
            protocol=protocol_version(),
            boards=[
                m.BoardKey(gpu_type=b.gpu_type, dtype=b.dtype, method=b.method, entries=b.entries) for b in found.boards
            ],
        )
    )


# -- contests ---------------------------------------------------------------------------------------------------


def _contest_summary(pc: public.PublicContest) -> m.ContestSummary:
    c, view = pc.contest, pc.view
    return m.ContestSummary(
        slug=c.slug,
        title=c.title,
        state=pc.state,  # type: ignore[arg-type]
        starts_at=c.starts_at,
        ends_at=c.ends_at,
        visibility=c.visibility,  # type: ignore[arg-type]
        scoring=c.scoring,
        problems=[m.ContestProblemRef(slug=p.slug, title=p.title, version=p.problem_version) for p in pc.problems],
        hidden_problems=len(view.problems) - len(pc.problems),
        targets=_targets(view),
    )


def _targets(view: ContestView) -> list[m.ContestTarget]:
    return [m.ContestTarget(gpu_type=t.gpu_type, dtype=t.dtype) for t in view.targets]


def _contest_board(board: ContestBoard) -> m.ContestBoard:
    return m.ContestBoard(
        phase=board.phase,  # type: ignore[arg-type]
        frozen=board.frozen,
        columns=[
            m.ContestColumn(problem=c.slug, gpu_type=c.gpu_type, dtype=c.dtype, entrants=c.entrants)
            for c in board.columns
        ],
        lines=[
            m.ContestLine(
                place=line.place,
                user=line.display_name,
                user_id=line.user_id,
                total=line.total,
                cells=[m.ContestCell(rank=c.rank, submission_id=c.submission_id, score=c.score) for c in line.cells],
            )
            for line in board.lines
        ],
    )


async def get_contests(request: web.Request) -> web.Response:
    await authenticate(request, "read")
    listed = await public.contest_list(request.app[POOL], datetime.now(UTC))
    return _json(m.ContestList(contests=[_contest_summary(pc) for pc in listed]))


async def get_contest(request: web.Request) -> web.Response:
    await authenticate(request, "read")
    phase = _text(request, "phase") or "contest"
    if phase not in ("contest", "upsolve"):
        raise ProblemError("invalid_option", f"`phase` is {phase[:32]!r}; choose contest or upsolve.")
    slug = request.match_info["slug"]
    if not SLUG.fullmatch(slug):
        # No contest has such a name, and the store must not be asked (a NUL cannot even be sent to it).
        raise ProblemError(
            "contest_not_found", f"There is no contest called `{shown(slug)}`; GET /v1/contests lists them."
        )
    pc = await public.public_contest(request.app[POOL], slug, phase, datetime.now(UTC))
    board = _contest_board(pc.board) if pc.board is not None else None
    return _json(m.ContestDetail(contest=_contest_summary(pc), board=board))


# -- ratings and quota ------------------------------------------------------------------------------------------


async def get_ratings(request: web.Request) -> web.Response:
    await authenticate(request, "read")
    page = _whole(request, "page", 1, MAX_PAGE, 1)
    page_size = _whole(request, "page_size", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE)
    rows = await rating_table(request.app[POOL])
    shown = rows[(page - 1) * page_size : page * page_size]
    entries = [
        m.RatingEntry(
            place=r.place,
            user=r.user.display_name,
            user_id=r.user.user_id,
            rating=r.user.rating,
            rd=r.user.rd,
            conservative=r.conservative,
            contests=r.user.contests,
        )
        for r in shown
    ]
    return _json(
        m.RatingTable(
            page=page, page_size=page_size, has_next=len(rows) > page * page_size, total=len(rows), entries=entries
        )
    )


async def get_quota(request: web.Request) -> web.Response:
    user = await authenticate(request, "read")
    pool = request.app[POOL]
    buckets = await user_quota(pool, user.external_id, request.app[SETTINGS].arena.rate)
    queue = await user_queue(pool, user.external_id)
    return _json(
        m.Quota(
            user=user.display_name,
            buckets=[
                m.ModeQuotaInfo(
                    mode=q.mode,
                    left=q.left,
                    burst=q.burst,
                    per_hour=q.per_hour,
                    next_in_s=q.next_in_s,
                    full_in_s=q.full_in_s,
                )
                for q in buckets
            ],
            queued_total=queue.queued,
            queued=[
                m.QueuedJob(
                    submission_id=run.job.submission_id,
                    problem=run.job.slug,
                    mode=run.job.mode,
                    gpu_type=run.job.gpu_type,
                    place=run.estimate.position,
                    start_in_s=run.estimate.start_in_s,
                )
                for run in queue.first
            ],
        )
    )


ROUTES = [
    ("/v1/problems", get_problems),
    ("/v1/problems/{slug}", get_problem),
    ("/v1/leaderboards/{slug}", get_leaderboard),
    ("/v1/contests", get_contests),
    ("/v1/contests/{slug}", get_contest),
    ("/v1/ratings", get_ratings),
    ("/v1/me/quota", get_quota),
]


def register(app: web.Application, pool: asyncpg.Pool, settings: ApiSettings) -> None:
    """Add the read routes to the API's application."""
    app[POOL] = pool
    app[SETTINGS] = settings
    app.add_routes([web.get(path, handler, allow_head=False) for path, handler in ROUTES])


# -- the OpenAPI document ---------------------------------------------------------------------------------------


def _ok(model: type, description: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


def _slug(what: str) -> dict[str, Any]:
    return {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}, "description": what}


def openapi_paths() -> dict[str, Any]:
    """The read routes' entries of the OpenAPI document."""
    bearer = [{"bearer": []}]
    refusals = openapi_problem_responses(401, 403, 429, 503)
    paging = [
        _query("page", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1}, "from 1"),
        _query(
            "page_size",
            {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": DEFAULT_PAGE_SIZE},
            "rows per page",
        ),
    ]
    text = {"type": "string"}

    def get(summary: str, ok: dict[str, Any], *statuses: int, parameters: list[Any] | None = None) -> dict[str, Any]:
        op: dict[str, Any] = {
            "summary": summary + " (scope read)",
            "security": bearer,
            "responses": {"200": ok, **refusals, **openapi_problem_responses(*statuses)},
        }
        if parameters:
            op["parameters"] = parameters
        return {"get": op}

    return {
        "/v1/problems": get("Every problem listed now", _ok(m.ProblemList, "the problems")),
        "/v1/problems/{slug}": {
            "parameters": [_slug("the problem's slug (a former slug works too)")],
            **get(
                "A problem's full interface in one dtype: signatures, parameters, shapes per case, the check, "
                "formulas and starters",
                _ok(m.ProblemDetail, "the problem"),
                404,
                422,
                parameters=[_query("dtype", {"enum": list(DTYPES)}, "default: the problem's first dtype")],
            ),
        },
        "/v1/leaderboards/{slug}": {
            "parameters": [_slug("the problem's slug")],
            **get(
                "One page of a problem's board: the one asked for, else the fullest that fits",
                _ok(m.Leaderboard, "the board"),
                404,
                422,
                parameters=[
                    _query("gpu_type", text, "the GPU pool (default: the fullest board's)"),
                    _query("dtype", {"enum": list(DTYPES)}, "default: the fullest board's"),
                    _query("language", text, "`any` (default), cuda, python or triton"),
                    _query("method", text, "the timing method (default: the fullest board's)"),
                    *paging,
                ],
            ),
        },
        "/v1/contests": get("Every contest, the latest start first", _ok(m.ContestList, "the contests")),
        "/v1/contests/{slug}": {
            "parameters": [_slug("the contest's slug")],
            **get(
                "A contest and its board (none before its start)",
                _ok(m.ContestDetail, "the contest"),
                404,
                422,
                parameters=[_query("phase", {"enum": ["contest", "upsolve"]}, "which board (default: contest)")],
            ),
        },
        "/v1/ratings": get("The rating table, best first", _ok(m.RatingTable, "a page"), 422, parameters=paging),
        "/v1/me/quota": get("The caller's rate-limit buckets and queued jobs", _ok(m.Quota, "the quota")),
    }
