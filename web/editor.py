"""Submitting from the browser: the form on a problem's page, the starter it loads, and the routes it calls.

For a signed-in reader, a problem's page carries a form: language, dtype, mode, GPU pool (where there are
several), and the code, written in the editor (CodeMirror, `web/static/editor.js`, built from `web/editor-src/`),
started from the problem's starter, pasted, or loaded from a file. The script sends it through the web's proxy of
the public API (`web.api_proxy`) and follows the run's events live, then opens its result page. The form only
offers what the API takes (`contract.names`, the problem's own dtypes, the pools the store knows); the API checks
everything and its refusals are shown as they come. Signed out, the page offers a link to sign in instead.

No inline script and no inline style: the page links `/static/editor.js` and `/static/editor.css`, and the script
finds the form by its id and its data attributes.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import asyncpg
from aiohttp import web

from contract.names import DEFAULT_MODE, DTYPES, LANGUAGES, MODE_DESCRIPTIONS, MODES
from core.browse import ProblemEntry, get_problem_entry, library_entry
from core.errors import InvalidOptionError, UnknownProblemError, UserFacingError
from core.problems import SLUG
from core.store import fleet as fleet_store
from problems.catalog import CatalogError
from problems.catalog import starter as catalog_starter
from web.api_proxy import PREFIX, add_api_proxy, proxy_of
from web.html import Html, esc, link, path_with
from web.result_parts import add_result_routes
from web.session import CONFIG as SIGNIN_CONFIG
from web.session import signed_in
from web.settings import WebSettings
from web.signin import SIGNIN_PATH

STATIC = Path(__file__).parent / "static"
DEFAULT_LANGUAGE = "python"
_POOL_KEY: web.AppKey[web.AppKey[asyncpg.Pool]] = web.AppKey("editor_pool_key")
# A year: the pages name each static file with its content's digest, so a new build is a new address.
STATIC_MAX_AGE_S = 365 * 24 * 3600


@cache
def static_version(name: str) -> str:
    """The first characters of the file's SHA-256: its address changes whenever its content does."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


def static_path(name: str) -> str:
    return f"/static/{name}?v={static_version(name)}"


def _options(values: list[tuple[str, str]], chosen: str) -> str:
    return "".join(
        f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(text)}</option>' for v, text in values
    )


def _select(name: str, label: str, values: list[tuple[str, str]], chosen: str) -> Html:
    return Html(f'<label>{esc(label)}<select name="{esc(name)}">{_options(values, chosen)}</select></label>')


def signin_link(slug: str) -> Html:
    target = path_with(SIGNIN_PATH, {"next": f"/problems/{slug}"})
    return (
        Html('<p class="signin-to-submit">')
        + link(target, "Sign in to submit")
        + Html(" a solution from this page.</p>")
    )


def submit_form(entry: ProblemEntry, csrf: str, pools: list[str], starter: str) -> Html:
    """The form, pre-filled with `starter` (the default language's, in the problem's first dtype)."""
    stored = entry.stored
    dtypes = [d for d in stored.dtypes if d in DTYPES]
    choices = [
        _select("language", "language", [(lang, lang) for lang in LANGUAGES], DEFAULT_LANGUAGE),
        _select("dtype", "dtype", [(d, stored.data_type(d)) for d in dtypes], dtypes[0] if dtypes else ""),
        _select("mode", "mode", [(m, f"{m}: {MODE_DESCRIPTIONS[m]}") for m in MODES], DEFAULT_MODE),
    ]
    if len(pools) > 1:  # one pool: the API takes it by default; none: the API says what is wrong
        choices.append(_select("gpu", "GPU pool", [(p, p) for p in pools], pools[0]))
    slug = esc(stored.slug)
    attributes = (
        f'id="submit-form" class="submit" method="post" action="{PREFIX}/v1/submissions" '
        f'data-problem="{slug}" data-csrf="{esc(csrf)}" data-starter="/problems/{slug}/starter"'
    )
    return Html(
        f'<section class="submit-panel" aria-labelledby="submit-heading"><h2 id="submit-heading">Submit</h2>'
        f"<noscript><p>The editor needs JavaScript; <code>arena submit --server</code> sends a file without it."
        f"</p></noscript>"
        f"<form {attributes}>"
        f'<div class="choices">{"".join(choices)}</div>'
        f'<div class="editor-box"><label for="source" class="code-label">code</label>'
        f'<textarea id="source" name="source" rows="18" spellcheck="false" autocomplete="off">{esc(starter)}'
        f"</textarea></div>"
        f'<p class="editor-note" aria-live="polite"></p>'
        f'<div class="actions"><button type="button" data-action="starter">Start from the starter</button>'
        f'<label class="upload">or load a file <input type="file" name="upload" accept=".cu,.py"></label>'
        f'<button type="submit" class="primary">Submit</button></div>'
        f'<p class="form-error" role="alert" hidden></p>'
        f"</form>"
        f'<section id="run" class="run" aria-live="polite" hidden><h3>Submission</h3><ol class="phases"></ol>'
        f'<table class="run-cases" hidden><thead><tr><th>case</th><th>verdict</th><th>median</th><th>note</th>'
        f"</tr></thead><tbody></tbody></table></section>"
        f"</section>"
        f'<link rel="stylesheet" href="{esc(static_path("editor.css"))}">'
        f'<script src="{esc(static_path("editor.js"))}" defer></script>'
    )


async def submit_panel(request: web.Request, entry: ProblemEntry) -> Html:
    """What a problem's page offers for submitting: the form for a signed-in reader, a link to sign in otherwise;
    nothing for a problem closed to submissions or where sign-in is off."""
    if not entry.stored.enabled or proxy_of(request.app) is None or request.app.get(SIGNIN_CONFIG) is None:
        return Html("")  # closed, or nowhere to send it, or nobody can sign in here
    session = await signed_in(request)
    if session is None:
        return signin_link(entry.stored.slug)
    pools = await fleet_store.pool_types(request.app[request.app[_POOL_KEY]])
    dtype = next((d for d in entry.stored.dtypes if d in DTYPES), "float32")
    try:
        starter = starter_text(entry, DEFAULT_LANGUAGE, dtype)
    except UserFacingError:  # a stored module whose starter cannot be made: an empty editor is still usable
        starter = ""
    return submit_form(entry, session.csrf, pools, starter)


def starter_text(entry: ProblemEntry, language: str, dtype: str) -> str:
    """The problem's starter in `language` and `dtype`, generated from its signature (no torch needed)."""
    try:
        _, text = catalog_starter(entry.stored.slug, entry.stored.source, language, dtype)  # type: ignore[arg-type]
    except CatalogError as exc:
        raise InvalidOptionError(f"No starter for `{entry.stored.slug}`: {exc}.") from exc
    return text


async def starter(request: web.Request) -> web.Response:
    """GET /problems/{slug}/starter?lang=&dtype=: the starter's text, which the editor loads when the choice
    changes (a wrong language or dtype is a 400 that says what to choose). A problem a contest hides until its
    start has none (404), as it has no page; one of the library not yet in the store has its own."""
    slug = request.match_info["slug"]
    try:
        entry = await get_problem_entry(request.app[request.app[_POOL_KEY]], slug)
    except UnknownProblemError:
        found = library_entry(slug) if SLUG.fullmatch(slug) else None
        if found is None:
            raise
        entry = found
    text = starter_text(entry, request.query.get("lang", DEFAULT_LANGUAGE), request.query.get("dtype", "float32"))
    return web.Response(text=text, content_type="text/plain", headers={"Cache-Control": "public, max-age=300"})


async def _static_cache(request: web.Request, response: web.StreamResponse) -> None:
    """Let browsers keep a static file for a year when its address names its content (`?v=` its digest, as
    `static_path` writes it): a new build has a new address. Any other address of it keeps the default."""
    name = request.path.removeprefix("/static/")
    if name != request.path and response.status == 200 and request.query.get("v") == static_version(name):
        response.headers["Cache-Control"] = f"public, max-age={STATIC_MAX_AGE_S}, immutable"


def add_editor_routes(app: web.Application, settings: WebSettings, pool_key: web.AppKey[asyncpg.Pool]) -> None:
    """Submitting from the browser: the API proxy, the starter route, the author's own result parts, and long
    cache lifetimes for the versioned static files. `pool_key` is where the app keeps its read-only pool."""
    app[_POOL_KEY] = pool_key
    add_api_proxy(app, settings)
    add_result_routes(app)
    app.router.add_get("/problems/{slug}/starter", starter)
    app.on_response_prepare.append(_static_cache)
