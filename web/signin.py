"""Sign in with Discord: the OAuth2 authorization-code flow with PKCE (RFC 6749 §4.1, RFC 7636), and sign-out.

    GET  /signin?next=/problems/matmul   → 302 to Discord's authorize page (scope identify, state, S256 challenge);
                                           the state, the PKCE verifier and `next` go in a signed, HttpOnly cookie
                                           that lives ten minutes, on /signin only
    GET  /signin/callback?code=&state=   → the state checked against that cookie; the code exchanged at Discord's
                                           token endpoint (with the verifier and the client's secret); the access
                                           token handed to the API service (`POST /v1/sessions`), which checks it
                                           with Discord itself and answers a personal token of the user; that
                                           token goes in the session cookie (`web/session.py`); 303 to `next`
    POST /signout (CSRF-checked)         → the API revokes the token (`DELETE` of `/v1/sessions/current`); the cookie
                                           is cleared; 303 to `next`

The web stays a reader of the store: the user row and the token are made by the API service. `next` is only ever
a path of this site (never an open redirect). Every page's header says "Sign in with Discord" or "<name> · Sign
out" (`web.html.HEADER_ACCOUNT`, set per request here). With ARENA_WEB_SECRET unset sign-in is off: the header
shows nothing and /signin says why.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Final

import aiohttp
import asyncpg
from aiohttp.web import (
    AppKey,
    Application,
    Request,
    Response,
    StreamResponse,
    get,
    middleware,
    post,
)
from pydantic import ValidationError

from api.web_sessions import WebSession as WebSessionAnswer
from web.html import HEADER_ACCOUNT, Html, esc, link, path_with
from web.pages import error_page
from web.session import (
    CONFIG,
    POOL_KEY,
    SignInConfig,
    SignInOffError,
    WebSession,
    check_csrf,
    clear_session_cookie,
    csrf_field,
    seal,
    session_cookie_value,
    set_session_cookie,
    signed_in,
    signin_config,
    unseal,
)
from web.settings import WebSettings

log = logging.getLogger(__name__)

SIGNIN_COOKIE: Final = "arena_signin"
SIGNIN_PURPOSE: Final = "signin"
SIGNIN_PATH: Final = "/signin"
SIGNIN_COOKIE_S: Final = 600  # long enough to read Discord's consent page, short enough to be of no use later
SCOPE: Final = "identify"
HTTP_TIMEOUT_S: Final = 15.0
MAX_NEXT_CHARS: Final = 2000
# Paths whose answers are no pages: no header to fill, so no session to read.
_NOT_PAGES: Final = ("/static/", "/healthz", "/readyz")

_HTTP = AppKey("signin_http", aiohttp.ClientSession)
_OFF_REASON = AppKey("signin_off_reason", str)

Handler = Callable[[Request], Awaitable[StreamResponse]]


def _page(title: str, message: str, status: int) -> Response:
    return Response(
        text=error_page(title, message),
        status=status,
        content_type="text/html",
        charset="utf-8",
        headers={"Cache-Control": "no-store"},
    )


def safe_next(raw: str | None) -> str:
    """`raw` when it is a path of this site, else `/`: a sign-in never sends the browser elsewhere."""
    if not raw or len(raw) > MAX_NEXT_CHARS or not raw.startswith("/") or raw.startswith("//"):
        return "/"
    # Browsers read `\` as `/` and drop tabs and newlines, so `/\evil.example` or `/\t/evil.example` leave the site.
    if "\\" in raw or any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return "/"
    parts = urllib.parse.urlsplit(raw)
    if parts.scheme or parts.netloc or parts.path.startswith((SIGNIN_PATH, "/signout")):
        return "/"
    return raw


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: the challenge of a verifier."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def _off(request: Request) -> Response:
    # Not a fault of the service but a feature this server does not offer: a 404 that says why.
    return _page("Sign-in is off", request.app[_OFF_REASON], 404)


def _config(request: Request) -> SignInConfig | None:
    return request.app[CONFIG]


# -- the routes --------------------------------------------------------------------------------------------------


async def signin(request: Request) -> StreamResponse:
    config = _config(request)
    if config is None:
        return _off(request)
    target = safe_next(request.query.get("next"))
    if await signed_in(request) is not None:
        return Response(status=303, headers={"Location": target, "Cache-Control": "no-store"})
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    query = {
        "response_type": "code",
        "client_id": config.client_id,
        "redirect_uri": config.redirect_uri,
        "scope": SCOPE,
        "state": state,
        "code_challenge": s256(verifier),
        "code_challenge_method": "S256",
    }
    response = Response(
        status=302,
        headers={"Location": f"{config.discord_url}/oauth2/authorize?{urllib.parse.urlencode(query)}"},
    )
    response.headers["Cache-Control"] = "no-store"
    attempt = {"state": state, "verifier": verifier, "next": target, "exp": int(time.time()) + SIGNIN_COOKIE_S}
    sealed = seal(config.secret, SIGNIN_PURPOSE, attempt)
    response.set_cookie(
        SIGNIN_COOKIE,
        sealed,
        max_age=SIGNIN_COOKIE_S,
        path=SIGNIN_PATH,
        secure=config.secure_cookies,
        httponly=True,
        samesite="Lax",  # sent on Discord's redirect back, a top-level GET
    )
    return response


class _SignInError(Exception):
    """The sign-in cannot go on: `message` says what happened and what to do, `status` is the page's."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


_AGAIN = "Sign in again with the link at the top of the page."


async def _discord_token(request: Request, config: SignInConfig, code: str, verifier: str) -> str:
    """The access token Discord gives for `code` (RFC 6749 §4.1.3, with the PKCE verifier, RFC 7636 §4.5)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": config.redirect_uri,
        "code_verifier": verifier,
        "client_id": config.client_id,
        "client_secret": config.client_secret,
    }
    url = f"{config.discord_url}/api/v10/oauth2/token"
    try:
        async with request.app[_HTTP].post(url, data=form, headers={"Accept": "application/json"}) as answer:
            body = await answer.json(content_type=None)
            status = answer.status
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        log.warning("the token exchange with Discord failed: %s", exc)
        raise _SignInError("Discord could not be reached to finish the sign-in; try again in a moment.", 502) from None
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        error = body.get("error") if isinstance(body, dict) else None
        log.info("Discord refused the code exchange: %s %s", status, error)
        raise _SignInError(f"Discord refused the sign-in ({str(error or status)[:40]}). {_AGAIN}", 403)
    if body.get("token_type", "").lower() != "bearer" or SCOPE not in str(body.get("scope", "")).split():
        raise _SignInError(f"Discord did not grant the `{SCOPE}` scope the arena needs. {_AGAIN}", 403)
    return str(body["access_token"])


async def _revoke_discord_token(request: Request, config: SignInConfig, access_token: str) -> None:
    """Give Discord's access token back (RFC 7009) once the arena's own token is made: nothing here uses it again,
    and left alone it would stay good at Discord for days. A failure is logged, not shown: the sign-in succeeded."""
    form = {
        "token": access_token,
        "token_type_hint": "access_token",
        "client_id": config.client_id,
        "client_secret": config.client_secret,
    }
    url = f"{config.discord_url}/api/v10/oauth2/token/revoke"
    try:
        async with request.app[_HTTP].post(url, data=form) as answer:
            if answer.status != 200:
                log.warning("Discord refused to revoke a sign-in's access token: %s", answer.status)
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("Discord could not be reached to revoke a sign-in's access token: %s", exc)


async def _arena_session(request: Request, config: SignInConfig, access_token: str) -> tuple[str, datetime]:
    """The session cookie's value for the personal token the API service makes for the Discord user behind
    `access_token`, and when it expires."""
    body = {"discord_access_token": access_token, "days": config.lifetime.days}
    try:
        async with request.app[_HTTP].post(f"{config.api_url}/v1/sessions", json=body) as answer:
            status, found = answer.status, await answer.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        log.warning("POST /v1/sessions to the API service failed: %s", exc)
        raise _SignInError("The arena's API service cannot be reached; try again in a moment.", 502) from None
    if status != 201 or not isinstance(found, dict):
        detail = found.get("detail") if isinstance(found, dict) else None
        log.info("the API service refused the sign-in: %s %s", status, detail)
        raise _SignInError(
            f"The arena refused the sign-in: {str(detail or status)[:300]}", 403 if status < 500 else 502
        )
    try:
        made = WebSessionAnswer.model_validate(found)
    except ValidationError:
        log.warning("the API service's answer to POST /v1/sessions was not understood: %.300r", found)
        raise _SignInError("The arena's answer was not understood; try again in a moment.", 502) from None
    value = session_cookie_value(config, made.token, made.token_id, made.user.id, made.expires_at)
    return value, made.expires_at


async def callback(request: Request) -> StreamResponse:
    config = _config(request)
    if config is None:
        return _off(request)
    started = unseal(config.secret, SIGNIN_PURPOSE, request.cookies.get(SIGNIN_COOKIE), time.time())
    try:
        if started is None:
            raise _SignInError(f"This sign-in expired, or was begun in another browser. {_AGAIN}", 400)
        sent_state = request.query.get("state", "")
        if not hmac.compare_digest(sent_state.encode(), str(started["state"]).encode()):
            raise _SignInError(f"This sign-in could not be verified: its state is not the one sent. {_AGAIN}", 403)
        if "error" in request.query:
            error = request.query["error"][:40]
            if error == "access_denied":
                raise _SignInError("You did not allow the arena to know who you are on Discord; nothing changed.", 403)
            raise _SignInError(f"Discord refused the sign-in ({error}). {_AGAIN}", 403)
        code = request.query.get("code")
        if not code:
            raise _SignInError(f"Discord sent no code back. {_AGAIN}", 400)
        access_token = await _discord_token(request, config, code, str(started["verifier"]))
        try:
            value, expires_at = await _arena_session(request, config, access_token)
        finally:
            await _revoke_discord_token(request, config, access_token)
    except _SignInError as failed:
        response = _page("Sign-in failed", failed.message, failed.status)
    else:
        response = Response(status=303, headers={"Location": safe_next(started["next"]), "Cache-Control": "no-store"})
        set_session_cookie(response, config, value, expires_at)
    # The state and verifier are for this one attempt: used or refused, they go.
    response.del_cookie(SIGNIN_COOKIE, path=SIGNIN_PATH, secure=config.secure_cookies, httponly=True, samesite="Lax")
    return response


async def signout(request: Request) -> StreamResponse:
    config = _config(request)
    if config is None:
        return _off(request)
    form = await request.post()
    target = safe_next(str(form.get("next") or "/"))
    session = await signed_in(request)
    if session is not None:
        sent = form.get("csrf")
        check_csrf(request, session, sent if isinstance(sent, str) else None)
        headers = {"Authorization": f"Bearer {session.token}"}
        try:
            async with request.app[_HTTP].delete(f"{config.api_url}/v1/sessions/current", headers=headers) as answer:
                if answer.status not in (204, 401):  # 401: the token had expired or was revoked already
                    log.warning("the API service answered %d to a sign-out", answer.status)
        except (aiohttp.ClientError, TimeoutError) as exc:
            # The browser forgets the token anyway; it stays valid on the API until it expires.
            log.warning("the sign-out could not reach the API service: %s", exc)
    response = Response(status=303, headers={"Location": target, "Cache-Control": "no-store"})
    clear_session_cookie(response, config)
    return response


# -- the header of every page ------------------------------------------------------------------------------------


def account_fragment(request: Request, session: WebSession | None) -> Html:
    """What the header shows: a sign-in link that comes back to this page, or the user's name and a sign-out."""
    here = request.path_qs if request.method == "GET" else "/"
    if session is None:
        signin_link = link(path_with(SIGNIN_PATH, {"next": here}), "Sign in with Discord")
        return Html(f'<span class="account">{signin_link}</span>')
    return Html(
        f'<form class="account" method="post" action="/signout"><span>{esc(session.name)}</span> · '
        f'{csrf_field(session)}<input type="hidden" name="next" value="{esc(safe_next(here))}">'
        '<button type="submit">Sign out</button></form>'
    )


@middleware
async def account_header(request: Request, handler: Handler) -> StreamResponse:
    """Fill the page header's account slot for this request; a signed-in page is the reader's alone."""
    if request.method != "GET" or request.path.startswith(_NOT_PAGES) or request.path.endswith(".png"):
        return await handler(request)
    session = await signed_in(request)
    reset = HEADER_ACCOUNT.set(account_fragment(request, session))
    try:
        response = await handler(request)
    finally:
        HEADER_ACCOUNT.reset(reset)
    if session is not None:
        response.headers["Cache-Control"] = "private, no-store"
    response.headers.setdefault("Vary", "Cookie")
    return response


# -- wiring ------------------------------------------------------------------------------------------------------


def add_signin_routes(app: Application, settings: WebSettings, pool_key: AppKey[asyncpg.Pool]) -> None:
    """Add sign-in to the web app: its routes, the header slot, and the HTTP client to Discord and the API.
    `pool_key` names the app's read-only pool. Call it while building the app, before it starts."""
    app[POOL_KEY] = pool_key
    try:
        config: SignInConfig | None = signin_config(settings)
    except SignInOffError as off:
        config = None
        app[_OFF_REASON] = off.message
        # A secret without the rest is a configuration half done; no secret at all is a choice.
        (log.warning if settings.secret is not None else log.info)("web sign-in is off: %s", off.message)
    app[CONFIG] = config
    app.add_routes([get(SIGNIN_PATH, signin), get(f"{SIGNIN_PATH}/callback", callback), post("/signout", signout)])
    if config is None:
        return
    app.middlewares.append(account_header)

    async def http_client(app: Application) -> AsyncIterator[None]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S)) as http:
            app[_HTTP] = http
            yield

    app.cleanup_ctx.append(http_client)
