"""Authenticating users of the public API: `Authorization: Bearer arena_pat_...` (a personal token, core/tokens.py).

`authenticate(request, scope)` answers who is calling, or raises a ProblemError (problem details):
- 403 `https_required`: the token came over plain http:// from another machine. Loopback clients may use http://.
  Behind a TLS proxy, list the proxy in `ARENA_API_TRUSTED_PROXIES`: its `X-Forwarded-Proto` then says whether
  the client used https, and its `X-Forwarded-For` gives the client's address. `ARENA_API_PUBLIC_ALLOW_PLAIN_HTTP`
  turns the check off (a proxy that sends no such header).
- 429 `auth_rate_limited` with Retry-After: the client's address made too many failed attempts lately (a token
  bucket per address, `ARENA_API_AUTH_FAILURES_*`, held by each replica of the API). While refused, even a good
  token is not looked at, so guessing learns nothing.
- 401 `token_missing`, `token_invalid`, `token_expired`, `token_revoked`.
- 403 `insufficient_scope` (the token lacks the scope), `banned` (a banned user's token asking to submit).
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg
from aiohttp import web

from api.problems_json import ProblemError
from api.settings import ApiSettings
from core.tokens import SCOPES, TOKEN_PREFIX, TokenError, TokenInvalidError, verify_token

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Each replica remembers at most this many client addresses; the least recently failing are forgotten first.
MAX_TRACKED_ADDRESSES = 100_000


@dataclass(frozen=True)
class AuthedUser:
    """The caller of a public route: the token's owner (the same user row as their Discord runs)."""

    user_id: int
    external_id: str
    display_name: str
    token_id: int
    scopes: tuple[str, ...]


class FailedAuthLimiter:
    """A token bucket of failed authentications per client address: `burst` at once, then `per_minute`."""

    def __init__(self, burst: int, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.per_s = per_minute / 60.0
        self.clock = clock
        # address -> (tokens left, when they were counted); most recently failing last.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _tokens(self, address: str, now: float) -> float:
        left, at = self._buckets.get(address, (float(self.burst), now))
        return min(float(self.burst), left + (now - at) * self.per_s)

    def refused_for_s(self, address: str) -> float | None:
        """Seconds until this address may try again, or None when it may try now."""
        if address not in self._buckets:
            return None
        tokens = self._tokens(address, self.clock())
        return None if tokens >= 1.0 else (1.0 - tokens) / self.per_s

    def failed(self, address: str) -> None:
        now = self.clock()
        self._buckets[address] = (max(0.0, self._tokens(address, now) - 1.0), now)
        self._buckets.move_to_end(address)
        while len(self._buckets) > MAX_TRACKED_ADDRESSES:
            self._buckets.popitem(last=False)


LIMITER = web.AppKey("failed_auth_limiter", FailedAuthLimiter)
_POOL = web.AppKey("user_auth_pool", asyncpg.Pool)
_SETTINGS = web.AppKey("user_auth_settings", ApiSettings)


def install_user_auth(app: web.Application, pool: asyncpg.Pool, settings: ApiSettings) -> None:
    """Give the application what `authenticate` needs; called once by `create_app`, before the app starts."""
    app[_POOL] = pool
    app[_SETTINGS] = settings
    app[LIMITER] = FailedAuthLimiter(settings.auth_failures_burst, settings.auth_failures_per_minute)


def _parse_address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip().split("%", 1)[0])
    except ValueError:
        return None


def _networks(settings: ApiSettings) -> list[Network]:
    return [ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies]


def _trusted(address: Address | None, proxies: list[Network]) -> bool:
    return address is not None and any(address in net for net in proxies)


@dataclass(frozen=True)
class Client:
    """Where a request comes from, as far as the API can tell: the client's address and whether it used TLS."""

    address: str
    loopback: bool
    secure: bool


def client_of(request: web.Request, settings: ApiSettings) -> Client:
    """The client behind the request: the peer itself, or, when the peer is a trusted proxy, the client it names."""
    peer = _parse_address(request.remote or "")
    secure = request.secure
    proxies = _networks(settings)
    client = peer
    if _trusted(peer, proxies):
        # The right-most address not itself a trusted proxy is the one the nearest proxy saw connect.
        hops = [a for a in (_parse_address(h) for h in request.headers.get("X-Forwarded-For", "").split(",")) if a]
        while hops and _trusted(hops[-1], proxies):
            hops.pop()
        if hops:
            client = hops[-1]
        proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
        secure = secure or proto == "https"
    loopback = client is not None and client.is_loopback
    return Client(address=str(client) if client else "unknown", loopback=loopback, secure=secure)


def _bearer(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, credentials = header.strip().partition(" ")
    if not header:
        raise ProblemError(
            "token_missing", f"Send a personal token: `Authorization: Bearer {TOKEN_PREFIX}...` (/token create)."
        )
    if scheme.lower() != "bearer" or not credentials.strip():
        raise ProblemError("token_missing", f"Send the token as `Authorization: Bearer {TOKEN_PREFIX}...`.")
    return credentials.strip()


async def authenticate(request: web.Request, scope: str) -> AuthedUser:
    """The caller, whose token is live and has `scope` (`read` or `submit`). Raises ProblemError otherwise."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; the scopes are {SCOPES}")
    settings, limiter = request.app[_SETTINGS], request.app[LIMITER]
    client = client_of(request, settings)
    if not (client.secure or client.loopback or settings.public_allow_plain_http):
        raise ProblemError(
            "https_required", "Personal tokens travel over https:// only; call the API at its https:// address."
        )
    wait_s = limiter.refused_for_s(client.address)
    if wait_s is not None:
        raise ProblemError(
            "auth_rate_limited",
            f"Too many failed authentications from this address; try again in {math.ceil(wait_s)} s.",
            retry_after_s=wait_s,
        )
    presented = _bearer(request)  # no credentials is no guess: not counted
    try:
        token = await verify_token(request.app[_POOL], presented)
    except TokenError as exc:
        # Only unknown tokens are guesses; an expired or revoked one was the caller's own.
        if isinstance(exc, TokenInvalidError):
            limiter.failed(client.address)
        raise ProblemError(exc.code, exc.message) from None
    if scope not in token.scopes:
        raise ProblemError(
            "insufficient_scope",
            f"This token's scopes are {', '.join(token.scopes)}; this route needs `{scope}`. Make a token with it.",
        )
    if scope == "submit" and token.banned:
        raise ProblemError("banned", "You are banned from submitting; ask a moderator why.")
    return AuthedUser(
        user_id=token.user_id,
        external_id=token.external_id,
        display_name=token.display_name,
        token_id=token.token_id,
        scopes=token.scopes,
    )
