"""Request signing between the bot and the runner: HMAC-SHA256 of timestamp, method, path and body.

    X-Arena-Timestamp: Unix time in seconds, as sent (e.g. "1767225600.123456")
    X-Arena-Signature: hex(HMAC-SHA256(secret, timestamp + "\\n" + METHOD + "\\n" + path?query + "\\n" + body))

The runner rejects a missing or wrong signature, a timestamp more than 60 s away from its clock, and a
signature it has already accepted within that window (a replay). Comparisons run in constant time.
`sign_headers` is the client half, used by `bot.runner_client` and the bench; it imports no aiohttp.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import time
from collections.abc import Awaitable, Callable, Collection

log = logging.getLogger(__name__)

TIMESTAMP_HEADER = "X-Arena-Timestamp"
SIGNATURE_HEADER = "X-Arena-Signature"
DEFAULT_SKEW_S = 60.0
MAX_REMEMBERED = 100_000


class AuthError(Exception):
    """A request failed authentication; `reason` is a short label for logs and metrics."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def signature(secret: bytes, timestamp: str, method: str, path_qs: str, body: bytes) -> str:
    message = b"\n".join([timestamp.encode(), method.upper().encode(), path_qs.encode(), body])
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def sign_headers(
    secret: bytes, method: str, path_qs: str, body: bytes = b"", now: float | None = None
) -> dict[str, str]:
    """The two headers that authenticate one request. Microseconds keep every signature unique."""
    timestamp = f"{time.time() if now is None else now:.6f}"
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, method, path_qs, body)}


class Verifier:
    """Checks signed requests for one secret. Remembers accepted signatures until they would be stale anyway."""

    def __init__(self, secret: bytes, skew_s: float = DEFAULT_SKEW_S, clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self._skew_s = skew_s
        self._clock = clock
        self._seen: dict[str, float] = {}

    def verify(self, method: str, path_qs: str, body: bytes, timestamp: str | None, provided: str | None) -> None:
        """Raise AuthError unless the request is signed, fresh and new."""
        if not timestamp or not provided:
            raise AuthError("missing", f"Sign the request: send {TIMESTAMP_HEADER} and {SIGNATURE_HEADER}.")
        try:
            sent_at = float(timestamp)
        except ValueError:
            sent_at = math.nan
        if not math.isfinite(sent_at):
            raise AuthError("bad_timestamp", f"{TIMESTAMP_HEADER} must be Unix time in seconds.")
        now = self._clock()
        if abs(now - sent_at) > self._skew_s:
            raise AuthError(
                "stale",
                f"The request's timestamp is {abs(now - sent_at):.0f} s away from the runner's clock (the limit is "
                f"{self._skew_s:.0f} s). Sync the clocks (NTP) and sign each request when it is sent.",
            )
        expected = signature(self._secret, timestamp, method, path_qs, body)
        if not hmac.compare_digest(expected.encode(), provided.encode("utf-8", "replace")):
            raise AuthError("bad_signature", "The request signature does not match; check the shared secret.")
        self._remember(provided, sent_at, now)

    def _remember(self, provided: str, sent_at: float, now: float) -> None:
        if provided in self._seen:
            raise AuthError("replayed", "This exact signed request was already received; sign each request anew.")
        if len(self._seen) >= MAX_REMEMBERED:
            self._seen = {sig: exp for sig, exp in self._seen.items() if exp > now}
            if len(self._seen) >= MAX_REMEMBERED:
                raise AuthError("overloaded", "Too many signed requests in the replay window; slow down.")
        self._seen[provided] = sent_at + self._skew_s


Handler = Callable[..., Awaitable[object]]


def make_auth_middleware(
    verifier: Verifier, public_paths: Collection[str], on_failure: Callable[[str], None] | None = None
) -> Callable[..., Awaitable[object]]:
    """An aiohttp middleware that answers 401 to any request on a non-public path that fails `verifier`."""
    from aiohttp import web

    @web.middleware
    async def auth_middleware(request: web.Request, handler: Handler) -> object:
        if request.path in public_paths:
            return await handler(request)
        body = await request.read()
        try:
            verifier.verify(
                request.method,
                request.raw_path,
                body,
                request.headers.get(TIMESTAMP_HEADER),
                request.headers.get(SIGNATURE_HEADER),
            )
        except AuthError as exc:
            log.warning("rejected %s %s from %s: %s", request.method, request.path, request.remote, exc.reason)
            if on_failure is not None:
                on_failure(exc.reason)
            raise web.HTTPUnauthorized(reason="Unauthorized", text=exc.message) from None
        return await handler(request)

    return auth_middleware
