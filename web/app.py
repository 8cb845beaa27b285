"""The aiohttp application: routes that parse the request, call the core and render, and the error pages.

`create_app(settings, pool)` serves an open pool (the tests'); `create_app(settings)` opens the store itself in a
cleanup context when the server starts, and closes it when the server stops. It opens it read-only
(`open_reader_store`): it never migrates, refuses a store whose schema is behind, and every connection acts as a role
that may only read. Nothing here writes: the kept boards (`board_cache.py`) live in this process's memory.

`clock` gives the moment every page is read at (what a contest hides or reveals depends on it): the wall clock, or a
test's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import asyncpg
from aiohttp.web import (
    AppKey,
    Application,
    HTTPException,
    HTTPNotFound,
    Request,
    Response,
    StreamResponse,
    get,
    middleware,
)

from core.browse import list_problems
from core.charts import render_roofline_png
from core.contests.views import rating_table
from core.errors import (
    ContestNotFoundError,
    InvalidOptionError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UserFacingError,
    UserNotFoundError,
)
from core.leaderboard import METHODS
from core.public import PublicContest, contest_list, problem_board, public_contest, public_rating, public_submission
from core.store.leaderboard import ANY_LANGUAGE
from core.store.pool import open_reader_store, ping
from runner.gpus import spec_for
from web.board_cache import StaleWhileRevalidate
from web.pages import (
    contest_list_page,
    contest_page,
    error_page,
    player_page,
    problem_list_page,
    problem_page,
    ratings_page,
    submission_page,
)
from web.settings import WebSettings
from web.signin import add_signin_routes

log = logging.getLogger(__name__)

POOL = AppKey("pool", asyncpg.Pool)
SETTINGS = AppKey("settings", WebSettings)
CHARTS = AppKey("charts", OrderedDict)
BOARDS: AppKey[StaleWhileRevalidate[tuple[PublicContest, datetime]]] = AppKey("boards")
Clock = Callable[[], datetime]
CLOCK: AppKey[Clock] = AppKey("clock")
# Drawn charts kept in memory, by chart version: drawing one takes matplotlib a few hundred milliseconds.
CHARTS_KEPT = 64
HEALTH_TIMEOUT_S = 2.0

Handler = Callable[[Request], Awaitable[StreamResponse]]


def _html(text: str, status: int = 200) -> Response:
    return Response(text=text, status=status, content_type="text/html", charset="utf-8")


# -- routes ----------------------------------------------------------------------------------------------------


def _now(request: Request) -> datetime:
    return request.app[CLOCK]()


async def problems(request: Request) -> Response:
    return _html(problem_list_page(await list_problems(request.app[POOL], now=_now(request))))


def _page_number(request: Request) -> int:
    """The `page` parameter, counted from 1 in the URL and from 0 in the core."""
    text = request.query.get("page", "1")
    if not text.isdigit() or not 1 <= int(text) <= 1_000_000:
        raise InvalidOptionError(f"`{text[:20]}` is not a page number; pages are numbered from 1.")
    return int(text) - 1


async def problem(request: Request) -> Response:
    query = request.query
    method = query.get("method") or None
    if method is not None and method not in METHODS:
        raise InvalidOptionError(f"`{method[:20]}` is not a timing method; choose one of {', '.join(METHODS)}.")
    found = await problem_board(
        request.app[POOL],
        request.match_info["slug"],
        now=_now(request),
        gpu_type=query.get("gpu") or None,
        dtype=query.get("dtype") or None,
        language=query.get("lang") or ANY_LANGUAGE,
        method=method,
        page=_page_number(request),
        page_size=request.app[SETTINGS].page_size,
    )
    return _html(problem_page(found))


async def submission(request: Request) -> Response:
    found = await public_submission(request.app[POOL], int(request.match_info["submission_id"]), now=_now(request))
    return _html(submission_page(found))


async def roofline(request: Request) -> Response:
    submission_id = int(request.match_info["submission_id"])
    found = await public_submission(request.app[POOL], submission_id, now=_now(request))
    if not found.has_chart or found.result is None:
        raise SubmissionNotFoundError(
            f"Submission #{submission_id} has no roofline chart: it timed nothing that passed."
        )
    etag = f'"{found.chart_version}"'
    headers = {"Cache-Control": f"public, max-age={request.app[SETTINGS].chart_max_age_s}", "ETag": etag}
    if request.headers.get("If-None-Match") == etag:
        return Response(status=304, headers=headers)
    charts = request.app[CHARTS]
    png = charts.get(found.chart_version)
    if png is None:
        png = await asyncio.to_thread(render_roofline_png, found.result, spec_for(found.result.device))
        charts[found.chart_version] = png
        while len(charts) > CHARTS_KEPT:
            charts.popitem(last=False)
    charts.move_to_end(found.chart_version)
    return Response(body=png, content_type="image/png", headers=headers)


async def contests(request: Request) -> Response:
    return _html(contest_list_page(await contest_list(request.app[POOL], _now(request))))


async def _contest_board(request: Request, phase: str) -> Response:
    page_number, slug, pool = _page_number(request), request.match_info["slug"], request.app[POOL]

    async def compute() -> tuple[PublicContest, datetime]:
        now = _now(request)
        return await public_contest(pool, slug, phase, now), now

    found, as_of = (await request.app[BOARDS].get((slug, phase), compute)).value
    return _html(contest_page(found, page_number, request.app[SETTINGS].page_size, as_of=as_of))


async def contest(request: Request) -> Response:
    return await _contest_board(request, "contest")


async def upsolve(request: Request) -> Response:
    return await _contest_board(request, "upsolve")


async def ratings(request: Request) -> Response:
    page_number = _page_number(request)
    return _html(ratings_page(await rating_table(request.app[POOL]), page_number, request.app[SETTINGS].page_size))


async def player(request: Request) -> Response:
    return _html(player_page(await public_rating(request.app[POOL], int(request.match_info["user_id"]))))


def _probe(ok: bool) -> Response:
    """A probe's answer for machines: `ok` or `not ready`, nothing more (no version, no count, no error text)."""
    return Response(text="ok" if ok else "not ready", status=200 if ok else 503, headers={"Cache-Control": "no-store"})


async def healthz(request: Request) -> Response:
    """Liveness: the process answers."""
    return _probe(True)


async def readyz(request: Request) -> Response:
    """Readiness: the store answers a trivial query within HEALTH_TIMEOUT_S (a free connection included)."""
    pool = request.app.get(POOL)  # absent while the store is still being opened
    if pool is None:
        return _probe(False)
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_S):
            return _probe(await ping(pool, HEALTH_TIMEOUT_S))
    except TimeoutError:
        return _probe(False)
    except Exception:
        # A probe answers `not ready` whatever failed behind it; what failed goes to the log, never to the caller.
        log.warning("readyz: the store check failed", exc_info=True)
        return _probe(False)


# -- errors ----------------------------------------------------------------------------------------------------

NOT_FOUND = (UnknownProblemError, SubmissionNotFoundError, ContestNotFoundError, UserNotFoundError)


@middleware
async def error_pages(request: Request, handler: Handler) -> StreamResponse:
    """A page that says what went wrong: what was not found, which option is wrong, or an apology with an incident
    id for a fault of ours (its traceback goes to the log, never to the reader)."""
    try:
        return await handler(request)
    except NOT_FOUND as exc:
        return _html(error_page("Not found", exc.message), 404)
    except UserFacingError as exc:
        return _html(error_page("Bad request", exc.message), 400)
    except HTTPNotFound:
        return _html(error_page("Not found", f"There is no page at `{request.path[:200]}`."), 404)
    except HTTPException:
        raise
    except Exception:
        incident = uuid.uuid4().hex[:8]
        log.exception("incident %s: %s %s failed", incident, request.method, request.path_qs)
        message = f"Sorry, this page failed on our side (incident {incident}). Try again in a moment."
        return _html(error_page("Server error", message), 500)


# -- the application -------------------------------------------------------------------------------------------


def _wall_clock() -> datetime:
    return datetime.now(UTC)


def create_app(settings: WebSettings, pool: asyncpg.Pool | None = None, *, clock: Clock = _wall_clock) -> Application:
    """The web leaderboard over `pool`, or over the store `settings.store` names, opened when the server starts."""
    app = Application(middlewares=[error_pages])
    app[SETTINGS] = settings
    app[CHARTS] = OrderedDict()
    app[BOARDS] = StaleWhileRevalidate(settings.board_cache_s)
    app[CLOCK] = clock
    if pool is not None:
        app[POOL] = pool
    else:

        async def store(app: Application) -> AsyncIterator[None]:
            async with open_reader_store(settings.reader_store()) as opened:
                app[POOL] = opened.pool
                yield

        app.cleanup_ctx.append(store)
    app.add_routes(
        [
            get("/", problems),
            get("/problems/{slug}", problem),
            get(r"/submissions/{submission_id:\d{1,18}}", submission),
            get(r"/submissions/{submission_id:\d{1,18}}/roofline.png", roofline),
            get("/contests", contests),
            get("/contests/{slug}", contest),
            get("/contests/{slug}/upsolve", upsolve),
            get("/ratings", ratings),
            get(r"/users/{user_id:\d{1,18}}", player),
            get("/healthz", healthz),
            get("/readyz", readyz),
        ]
    )
    add_signin_routes(app, settings, POOL)
    return app
