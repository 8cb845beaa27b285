"""Who is signed in to the web, and the CSRF token their forms carry.

A signed-in browser holds one cookie, `SESSION_COOKIE`: a personal token of the arena (`core/tokens.py`) that the
API service made when the user signed in with Discord (`web/signin.py`, `api/web_sessions.py`), with the token's
id and its owner, sealed with the web's secret (HMAC-SHA256; readable by its holder, whose own token it is, and
unforgeable without the secret). The web never writes, and its read-only role may not read token hashes: on every
request it reads the token's row by the sealed id, so a token that expired or was revoked (signed out, here or
with /token revoke) means signed out at once, on every replica. The token itself is what the web sends to the API
to act as the user (`Authorization: Bearer`), where it is checked by its hash.

Every form and every same-origin script's POST carries a CSRF token derived from the session, in the form field
`csrf` or the header `X-CSRF-Token`: `HMAC(ARENA_WEB_SECRET, SHA-256(token))`. It changes with each sign-in and
cannot be computed without the web's secret; `check_csrf` compares it in constant time.

    session = await signed_in(request)            # None: nobody is signed in (or sign-in is off)
    if session is not None and request.method == "POST":
        check_csrf(request, session, (await request.post()).get("csrf"))   # HTTPForbidden when wrong or missing
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

import asyncpg
from aiohttp.web import AppKey, Application, HTTPForbidden, Request, RequestKey, StreamResponse

from core.errors import UserFacingError
from core.members import PLATFORM
from core.tokens import TokenError, live_token_by_id, looks_like_token, token_digest
from web.html import Html, esc
from web.settings import WebSettings

SESSION_COOKIE: Final = "arena_session"
CSRF_FIELD: Final = "csrf"
CSRF_HEADER: Final = "X-CSRF-Token"


def session_cookie_name() -> str:
    """The name of the cookie that holds a signed-in browser's token."""
    return SESSION_COOKIE


@dataclass(frozen=True)
class WebSession:
    """A signed-in user: their arena user row, their Discord id and name, their token (to call the API as them,
    `Authorization: Bearer <token>`) and the CSRF token their forms must send back."""

    user_id: int
    discord_id: str
    name: str
    token: str = field(repr=False)  # a credential: never in a log line or a traceback
    csrf: str = field(repr=False)


class SignInOffError(UserFacingError):
    """Sign-in is not configured, or configured wrongly: the message names the settings to set."""


@dataclass(frozen=True)
class SignInConfig:
    """What sign-in needs, checked once when the app is built (`signin_config`)."""

    secret: bytes = field(repr=False)  # kept out of logs and tracebacks
    client_id: str
    client_secret: str = field(repr=False)
    discord_url: str
    public_url: str
    api_url: str
    lifetime: timedelta
    secure_cookies: bool

    @property
    def redirect_uri(self) -> str:
        """Where Discord sends the browser back: register exactly this in the Discord application."""
        return f"{self.public_url}/signin/callback"


MIN_SECRET_BYTES: Final = 32


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def signin_config(settings: WebSettings) -> SignInConfig:
    """The sign-in configuration, or SignInOffError saying which setting is missing or wrong."""
    if settings.secret is None:
        raise SignInOffError("Sign-in is off on this server: its operator has not set ARENA_WEB_SECRET.")
    secret = settings.secret.get_secret_value().encode()
    if len(secret) < MIN_SECRET_BYTES:
        raise SignInOffError(
            f"ARENA_WEB_SECRET is shorter than {MIN_SECRET_BYTES} bytes; make one with `openssl rand -hex 32`."
        )
    missing = [
        name
        for name, value in (
            ("ARENA_WEB_DISCORD_CLIENT_ID", settings.discord_client_id),
            ("ARENA_WEB_DISCORD_CLIENT_SECRET", settings.discord_client_secret),
            ("ARENA_WEB_PUBLIC_URL", settings.public_url),
        )
        if not value
    ]
    if missing:
        raise SignInOffError(f"Sign-in is off on this server: set {', '.join(missing)} (docs/web.md).")
    assert settings.public_url is not None and settings.discord_client_secret is not None  # checked just above
    public = urllib.parse.urlsplit(settings.public_url.rstrip("/"))
    loopback = _is_loopback(public.hostname or "")
    # A session cookie without Secure could leak over plain http; that is tolerable only on this machine.
    if public.scheme != "https" and not (public.scheme == "http" and loopback):
        raise SignInOffError(
            f"ARENA_WEB_PUBLIC_URL is {settings.public_url!r}: give the https:// address browsers use "
            "(plain http:// only for 127.0.0.1 or localhost)."
        )
    if public.query or public.fragment or not public.hostname:
        raise SignInOffError(f"ARENA_WEB_PUBLIC_URL is {settings.public_url!r}: give scheme, host and port only.")
    return SignInConfig(
        secret=secret,
        client_id=settings.discord_client_id or "",
        client_secret=settings.discord_client_secret.get_secret_value(),
        discord_url=settings.discord_url.rstrip("/"),
        public_url=urllib.parse.urlunsplit((public.scheme, public.netloc, public.path, "", "")),
        api_url=settings.api_url.rstrip("/"),
        lifetime=timedelta(days=settings.session_days),
        secure_cookies=public.scheme == "https",
    )


# Set by `web.signin.add_signin_routes`: the configuration (None: sign-in is off) and the key of the reader pool.
CONFIG: AppKey[SignInConfig | None] = AppKey("signin_config")
POOL_KEY: AppKey[AppKey[asyncpg.Pool]] = AppKey("signin_pool_key")
_CACHED: RequestKey[object] = RequestKey("web_session", object)  # a typed key: a str key warns
_NOBODY = object()


def csrf_token(secret: bytes, token: str) -> str:
    """The CSRF token of the session whose arena token is `token`."""
    return hmac.new(secret, b"csrf\x00" + token_digest(token), hashlib.sha256).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, purpose: str, payload: bytes) -> bytes:
    # The purpose is signed too, so that a value sealed for one cookie is refused as another.
    return hmac.new(secret, purpose.encode() + b"\x00" + payload, hashlib.sha256).digest()


def seal(secret: bytes, purpose: str, data: dict[str, Any]) -> str:
    """`data` (with an `exp`, seconds since the epoch) as a cookie value that only the holder of `secret` could
    have written for `purpose`; it is signed, not hidden."""
    payload = json.dumps(data, separators=(",", ":")).encode()
    return f"{_b64(payload)}.{_b64(_mac(secret, purpose, payload))}"


def unseal(secret: bytes, purpose: str, value: str | None, now: float) -> dict[str, Any] | None:
    """The data of a value sealed for `purpose` that is intact and whose `exp` is not past; None otherwise."""
    if not value or value.count(".") != 1:
        return None
    body, mac = value.split(".")
    try:
        payload, sent = _unb64(body), _unb64(mac)
        if not hmac.compare_digest(sent, _mac(secret, purpose, payload)):
            return None
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("exp"), int) or data["exp"] < now:
        return None
    return data


_SESSION_PURPOSE: Final = "session"


def session_cookie_value(config: SignInConfig, token: str, token_id: int, user_id: int, expires_at: datetime) -> str:
    """The session cookie's value for a token the API service made: the token, its id and owner, sealed."""
    claims = {"token": token, "id": token_id, "user": user_id, "exp": int(expires_at.timestamp())}
    return seal(config.secret, _SESSION_PURPOSE, claims)


async def session_of_cookie(app: Application, value: str) -> WebSession | None:
    """The session a session cookie's value stands for, or None when sign-in is off, the value was not sealed by
    this web, or its token is not live (expired, revoked) or not a Discord user's."""
    config = app.get(CONFIG)
    if config is None:
        return None
    claims = unseal(config.secret, _SESSION_PURPOSE, value, time.time())
    if claims is None or not looks_like_token(str(claims.get("token"))) or not isinstance(claims.get("id"), int):
        return None
    try:
        live = await live_token_by_id(app[app[POOL_KEY]], claims["id"])
    except TokenError:
        return None
    platform, _, discord_id = live.external_id.partition(":")
    if live.user_id != claims.get("user") or platform != PLATFORM or not discord_id:
        return None
    token = str(claims["token"])
    return WebSession(
        user_id=live.user_id,
        discord_id=discord_id,
        name=live.display_name,
        token=token,
        csrf=csrf_token(config.secret, token),
    )


async def signed_in(request: Request) -> WebSession | None:
    """Who is signed in on this request, read from its session cookie once per request; None: nobody."""
    cached = request.get(_CACHED, None)
    if cached is not None:
        return None if cached is _NOBODY else cached  # type: ignore[return-value]
    value = request.cookies.get(SESSION_COOKIE)
    session = await session_of_cookie(request.app, value) if value else None
    request[_CACHED] = _NOBODY if session is None else session
    return session


def check_csrf(request: Request, session: WebSession, sent: str | None) -> None:
    """Refuse (403) a state-changing request whose CSRF token is missing or not this session's. `sent` is the form
    field `csrf`; when None, the header `X-CSRF-Token` is read instead (a script's POST)."""
    if sent is None:
        sent = request.headers.get(CSRF_HEADER)
    if not sent:
        raise HTTPForbidden(text="This form lacks its CSRF token; reload the page and try again.")
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), session.csrf.encode()):
        raise HTTPForbidden(text="This form's CSRF token is not your session's; reload the page and try again.")


def csrf_field(session: WebSession) -> Html:
    """The hidden field every POST form of a signed-in page carries."""
    return Html(f'<input type="hidden" name="{CSRF_FIELD}" value="{esc(session.csrf)}">')


def set_session_cookie(response: StreamResponse, config: SignInConfig, value: str, expires_at: datetime) -> None:
    """Put the session (`session_cookie_value`) in the browser: HttpOnly, SameSite=Lax, Path=/, Secure unless the
    web is served on loopback over http; it lasts as long as the token does."""
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=max(0, int(expires_at.timestamp() - time.time())),
        path="/",
        secure=config.secure_cookies,
        httponly=True,
        samesite="Lax",
    )


def clear_session_cookie(response: StreamResponse, config: SignInConfig) -> None:
    response.del_cookie(SESSION_COOKIE, path="/", secure=config.secure_cookies, httponly=True, samesite="Lax")
