"""The aiohttp application: routes that parse the request, call the core and render, and the error pages.

`create_app(settings, pool)` serves an open pool (the tests'); `create_app(settings)` opens the store itself in a
cleanup context when the server starts, and closes it when the server stops. It opens it read-only
(`open_reader_store`): it never migrates, refuses a store whose schema is behind, and every connection acts as a role
that may only read. Nothing here writes: the kept boards (`board_cache.py`) live in this process's memory.

`clock` gives the moment every page is read at (what a contest hides or reveals depends on it): the wall clock, or a
test's.

Kept as one module: the routes of the site share one request parsing and one error-page mapping; the pages they
render are in web/pages.py.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
from aiohttp.web import (
    AppKey,
    Application,
    FileResponse,
    HTTPException,
    HTTPMovedPermanently,
    HTTPNotFound,
    Request,
    Response,
    StreamResponse,
    get,
    middleware,
)

from core.browse import DIFFICULTY_ORDER, library_problems
from core.charts import render_roofline_png
from core.errors import (
    ContestNotFoundError,
    InvalidOptionError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UserFacingError,
    UserNotFoundError,
)
from core.leaderboard import METHODS
from core.public import (
    PublicContest,
    RatingPage,
    contest_list,
    moved_to,
    player_profile,
    problem_board,
    public_contest,
    public_submission,
    rating_page,
)
from core.server_logs import quiet_malformed_requests
from core.store.leaderboard import ANY_LANGUAGE
from core.store.pool import open_reader_store, ping
from runner.gpus import spec_for
from web.board_cache import StaleWhileRevalidate
from web.editor import add_editor_routes, submit_panel
from web.html import path_with
from web.page_cache import PAGES, kept, page_cache
from web.pages import (
    ProblemFilter,
    contest_list_page,
    contest_page,
    error_page,
    player_page,
    problem_list_page,
    problem_page,
    problem_path,
    ratings_page,
    submission_page,
)
from web.result_parts import own_run, own_run_page
from web.session import signed_in
from web.settings import WebSettings
from web.signin import add_signin_routes

log = logging.getLogger(__name__)

POOL = AppKey("pool", asyncpg.Pool)
SETTINGS = AppKey("settings", WebSettings)
CHARTS = AppKey("charts", OrderedDict)
BOARDS: AppKey[StaleWhileRevalidate[tuple[PublicContest, datetime]]] = AppKey("boards")
Clock = Callable[[], datetime]
CLOCK: AppKey[Clock] = AppKey("clock")
RATINGS: AppKey[StaleWhileRevalidate[RatingPage]] = AppKey("ratings")
# Drawn charts kept in memory, by chart version: drawing one takes matplotlib a few hundred milliseconds.
CHARTS_KEPT = 64
HEALTH_TIMEOUT_S = 2.0
PAGE_CACHE_S = 5.0

Handler = Callable[[Request], Awaitable[StreamResponse]]


def _html(text: str, status: int = 200) -> Response:
    return Response(text=text, status=status, content_type="text/html", charset="utf-8")


# -- routes ----------------------------------------------------------------------------------------------------


def _now(request: Request) -> datetime:
    return request.app[CLOCK]()


def _choice(request: Request, name: str, choices: Sequence[str]) -> str | None:
    """A filter's value from the query (None: any), which must be one of `choices`."""
    value = request.query.get(name) or None
    if value is not None and value not in choices:
        raise InvalidOptionError(f"`{value[:32]}` is not a {name} here; choose one of {', '.join(choices)}.")
    return value


async def problems(request: Request) -> Response:
    """Every problem of the library and the store, narrowed by `?category=` and `?difficulty=`."""
    entries = await library_problems(request.app[POOL], now=_now(request))
    categories = tuple(sorted({e.category for e in entries}))
    difficulties = tuple(sorted({e.difficulty for e in entries}, key=lambda d: (DIFFICULTY_ORDER.get(d, 9), d)))
    category, difficulty = _choice(request, "category", categories), _choice(request, "difficulty", difficulties)
    shown = [e for e in entries if category in (None, e.category) and difficulty in (None, e.difficulty)]
    return _html(problem_list_page(shown, ProblemFilter(category, difficulty, categories, difficulties)))


def _page_number(request: Request) -> int:
    """The `page` parameter, counted from 1 in the URL and from 0 in the core.

    Only ASCII digits, at most seven: `str.isdigit` is also true of `²` and `⑦`, which `int` refuses, and `int`
    refuses a string of more than 4,300 digits too."""
    text = request.query.get("page", "1")
    if not (text.isascii() and text.isdigit() and len(text) <= 7) or not 1 <= int(text) <= 1_000_000:
        raise InvalidOptionError(f"`{text[:20]}` is not a page number; pages are numbered from 1.")
    return int(text) - 1


async def problem(request: Request) -> Response:
    moved = await moved_to(request.app[POOL], request.match_info["slug"])
    if moved is not None:
        # A former slug: the page has a new address for good (301), the board asked for kept.
        raise HTTPMovedPermanently(path_with(problem_path(moved), dict(request.query)))
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
    return _html(problem_page(found, await submit_panel(request, found.entry)))


async def submission(request: Request) -> Response:
    if (run := await own_run(request, int(request.match_info["submission_id"]))) is not None:
        return _html(own_run_page(run))  # what the API lets the signed-in reader see: their own runs in full
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


def _board_computation(
    app: Application, slug: str, phase: str
) -> Callable[[], Awaitable[tuple[PublicContest, datetime]]]:
    """How a contest board is computed for the kept boards: as at the moment the computation starts."""

    async def compute() -> tuple[PublicContest, datetime]:
        now = app[CLOCK]()
        return await public_contest(app[POOL], slug, phase, now), now

    return compute


async def _contest_board(request: Request, phase: str) -> Response:
    page_number, slug, app = _page_number(request), request.match_info["slug"], request.app
    found, as_of = (await app[BOARDS].get((slug, phase), _board_computation(app, slug, phase))).value
    return _html(contest_page(found, page_number, app[SETTINGS].page_size, as_of=as_of))


# Upsolve boards computed as the server starts: those of the latest contests that ended, which readers still visit.
UPSOLVE_WARMED = 5


async def warm_live_boards(app: Application) -> None:
    """Start computing the board of every contest that runs (or waits for its last runs) as the server starts: at 10
    million submissions a live board takes most of a second to compute, and a crowd may be waiting for it. A frozen
    board is read from its standings. The upsolve boards of the UPSOLVE_WARMED latest contests that ended are
    computed too (5.5 s for one at 10 million submissions); an older one is computed when someone first asks."""
    try:
        listed = await contest_list(app[POOL], app[CLOCK]())
    except Exception:
        # Warming is an optimisation: a store that does not answer yet leaves the first readers to compute.
        log.warning("the live contest boards could not be listed to compute them ahead", exc_info=True)
        return
    for pc in listed:
        if pc.state in ("running", "ended"):
            app[BOARDS].warm((pc.contest.slug, "contest"), _board_computation(app, pc.contest.slug, "contest"))
    # The list comes latest start first.
    for pc in [pc for pc in listed if pc.state in ("ended", "frozen")][:UPSOLVE_WARMED]:
        app[BOARDS].warm((pc.contest.slug, "upsolve"), _board_computation(app, pc.contest.slug, "upsolve"))


async def contest(request: Request) -> Response:
    return await _contest_board(request, "contest")


async def upsolve(request: Request) -> Response:
    return await _contest_board(request, "upsolve")


async def ratings(request: Request) -> Response:
    """One page of the rating table, read a page at a time and kept like a contest board: it changes only when a
    contest freezes, and thousands of readers may ask for its first page at once."""
    page_number, pool, page_size = _page_number(request), request.app[POOL], request.app[SETTINGS].page_size

    async def compute() -> RatingPage:
        return await rating_page(pool, page_number, page_size)

    return _html(ratings_page((await request.app[RATINGS].get(page_number, compute)).value))


async def player(request: Request) -> Response:
    """A competitor's page; the competitor themselves, signed in, also sees their private runs listed."""
    viewer = await signed_in(request)
    found = await player_profile(
        request.app[POOL],
        int(request.match_info["user_id"]),
        now=_now(request),
        viewer_id=viewer.user_id if viewer is not None else None,
    )
    return _html(player_page(found))


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


# A file under web/static: names of letters, digits, '.', '_' and '-' that start with neither '.' nor '-', in at most
# four folders. Nothing else reaches the file system: no '..', no hidden file, no name too long for it (an OSError).
STATIC_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}(?:/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}){0,3}")
STATIC_MAX_AGE_S = 3600


async def static_file(request: Request) -> StreamResponse:
    """The style sheet and scripts the pages link, with their type from the name and a validator for revisits."""
    name = request.match_info["name"]
    path = STATIC / name
    if not STATIC_NAME.fullmatch(name) or not path.is_file():
        raise HTTPNotFound()
    return FileResponse(path, headers={"Cache-Control": f"public, max-age={STATIC_MAX_AGE_S}"})


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


# -- headers every response carries ----------------------------------------------------------------------------

# Where the browser may be sent by a form: here, and Discord's authorization page (signing in leaves the site there).
DISCORD_ORIGIN = "https://discord.com"
# No inline script or style anywhere: the pages link the style sheet and scripts under /static, so an injected
# <script> or style attribute does nothing even if escaping ever failed. Charts are images or inline SVG markup.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        f"form-action 'self' {DISCORD_ORIGIN}",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


async def security_headers(request: Request, response: StreamResponse) -> None:
    """Set the security headers on every response as it is sent: pages, images, static files, redirects and the
    errors aiohttp answers itself (405, a static file not found), which a middleware's return value never sees."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


# -- the application -------------------------------------------------------------------------------------------

STATIC = Path(__file__).parent / "static"


def _wall_clock() -> datetime:
    return datetime.now(UTC)


def create_app(settings: WebSettings, pool: asyncpg.Pool | None = None, *, clock: Clock = _wall_clock) -> Application:
    """The web leaderboard over `pool`, or over the store `settings.store` names, opened when the server starts."""
    quiet_malformed_requests()
    app = Application(middlewares=[error_pages])
    app.on_response_prepare.append(security_headers)
    app[SETTINGS] = settings
    app[CHARTS] = OrderedDict()
    app[BOARDS] = StaleWhileRevalidate(settings.board_cache_s)
    app[RATINGS] = StaleWhileRevalidate(settings.board_cache_s)
    # Whole pages for readers who have not signed in (web/page_cache.py): a few seconds at most, so that a new result
    # shows on its board soon, while a crowd reading one page at once costs one rendering.
    app[PAGES] = page_cache(min(settings.board_cache_s, PAGE_CACHE_S))
    app[CLOCK] = clock
    if pool is not None:
        app[POOL] = pool
    else:

        async def store(app: Application) -> AsyncIterator[None]:
            async with open_reader_store(settings.reader_store()) as opened:
                app[POOL] = opened.pool
                yield

        app.cleanup_ctx.append(store)
    # After the store is open (a cleanup context starts before the handlers added to on_startup after it).
    app.on_startup.append(warm_live_boards)
    app.add_routes(
        [
            get("/", kept(problems)),
            get("/problems/{slug}", kept(problem)),
            get(r"/submissions/{submission_id:[0-9]{1,18}}", kept(submission)),
            get(r"/submissions/{submission_id:[0-9]{1,18}}/roofline.png", roofline),
            get("/contests", kept(contests)),
            get("/contests/{slug}", kept(contest)),
            get("/contests/{slug}/upsolve", kept(upsolve)),
            get("/ratings", kept(ratings)),
            get(r"/users/{user_id:[0-9]{1,18}}", kept(player)),
            get("/healthz", healthz),
            get("/readyz", readyz),
        ]
    )
    add_signin_routes(app, settings, POOL)
    # The style sheet and the scripts the pages link (the CSP allows no inline ones); no folder listing.
    app.router.add_get("/static/{name:.+}", static_file, name="static")
    add_editor_routes(app, settings, POOL)
    return app
