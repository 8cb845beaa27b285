"""Request signing between the bot and the runner: HMAC-SHA256 of timestamp, method, path and body.

    X-Arena-Timestamp: Unix time in seconds, as sent (e.g. "1767225600.123456")
    X-Arena-Signature: hex(HMAC-SHA256(secret, timestamp + "\\n" + METHOD + "\\n" + path?query + "\\n" + body))

The runner rejects a missing or wrong signature, a timestamp more than the skew window (60 s) away from its
clock, and a signature it has already accepted (a replay). Comparisons run in constant time.

Replays across restarts: the daemon's `Verifier` has a `ReplayLog`, a file in its state directory that holds
every accepted signature with the time it may be forgotten. A signature is appended, and the file flushed to
disk (fdatasync), *before* the request is acted on; the file is read back at start. A request is acceptable
only while its timestamp is within the skew window of the runner's clock, so a signature need not be kept
past `timestamp + skew`; it is kept one window longer, so that the runner's clock stepping back by less than
a window cannot make a forgotten signature acceptable again. A crash mid-append leaves a torn last line,
which is skipped on load: that request was never acted on.

`sign_headers` is the client half, used by `runner.clients.http` and the bench; this module imports no aiohttp
at import time.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import hmac
import logging
import math
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

TIMESTAMP_HEADER = "X-Arena-Timestamp"
SIGNATURE_HEADER = "X-Arena-Signature"
DEFAULT_SKEW_S = 60.0
MAX_REMEMBERED = 100_000
# The log is rewritten without its stale lines once it holds this many lines and twice the live ones.
COMPACT_MIN_LINES = 4096
_SIGNATURE_RE = re.compile(r"^[0-9a-f]{64}$")


class AuthError(Exception):
    """A request failed authentication; `reason` is a short label for logs and metrics."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class ReplayLogError(Exception):
    """The log of accepted signatures cannot be opened or written; the message names the file and the fix."""


def signature(secret: bytes, timestamp: str, method: str, path_qs: str, body: bytes) -> str:
    message = b"\n".join([timestamp.encode(), method.upper().encode(), path_qs.encode(), body])
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def sign_headers(
    secret: bytes, method: str, path_qs: str, body: bytes = b"", now: float | None = None
) -> dict[str, str]:
    """The two headers that authenticate one request. Microseconds keep every signature unique."""
    timestamp = f"{time.time() if now is None else now:.6f}"
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, method, path_qs, body)}


RUNNER_HEADER = "X-Arena-Runner"


def runner_sign_headers(runner_id: int, secret: bytes, method: str, path_qs: str, body: bytes = b"") -> dict[str, str]:
    """The headers that sign a runner's own call to the core's API service: its id, and the two headers above under
    the secret it got when it joined its pool (checked by `api.runner_auth`)."""
    return {RUNNER_HEADER: str(runner_id), **sign_headers(secret, method, path_qs, body)}


@dataclass(frozen=True)
class Accepted:
    """A signature that passed `Verifier.verify`, and when it may be forgotten (Unix time)."""

    signature: str
    forget_at: float


class ReplayLog:
    """Accepted signatures on disk, one `<forget_at> <signature>` line each, so that a restart forgets none.

    `open()` takes an exclusive lock (a second daemon on the same state directory would accept each request
    once more), reads the file, drops stale and torn lines, and rewrites it. `append()` writes one line and
    syncs it to disk before returning; it may be called from several threads.
    """

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._live: dict[str, float] = {}
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._lines = 0
        self._compact_at = COMPACT_MIN_LINES

    def open(self) -> dict[str, float]:
        """Lock and load the log; the signatures still to be remembered, with their forget times."""
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock_fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ReplayLogError(
                f"Cannot create the replay log beside {self.path}: {exc.strerror}. "
                f"Make RUNNER_STATE_DIR writable by the runner."
            ) from exc
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._close_lock()
            raise ReplayLogError(
                f"Another runner daemon holds {self.path}: give each daemon its own RUNNER_STATE_DIR."
            ) from exc
        try:
            existed = self.path.exists()
            torn = self._read()
            with self._lock:
                self._rewrite()
        except OSError as exc:
            self._close_lock()
            raise ReplayLogError(f"Cannot read or write the replay log {self.path}: {exc.strerror}.") from exc
        if not existed:
            log.warning(
                "no replay log at %s: a first start, or the state directory was emptied. Keep RUNNER_STATE_DIR on "
                "a disk that survives reboots; requests signed before this start are remembered only from now.",
                self.path,
            )
        elif torn:
            log.warning("replay log %s: skipped %d unreadable line(s) (a write cut off by a crash)", self.path, torn)
        return dict(self._live)

    def _read(self) -> int:
        """Fill `_live` from the file; the number of lines that did not parse."""
        now, torn = self._clock(), 0
        try:
            text = self.path.read_bytes().decode("ascii", "replace")
        except FileNotFoundError:
            return 0
        for line in text.splitlines():
            parts = line.split(" ")
            try:
                forget_at = float(parts[0])
            except ValueError:
                forget_at = math.nan
            if len(parts) != 2 or not math.isfinite(forget_at) or not _SIGNATURE_RE.match(parts[1]):
                torn += 1
            elif forget_at > now:
                self._live[parts[1]] = max(forget_at, self._live.get(parts[1], forget_at))
        return torn

    def _rewrite(self) -> None:
        """Replace the file with the live entries only (temporary file, sync, rename, sync the directory)."""
        now = self._clock()
        self._live = {sig: at for sig, at in self._live.items() if at > now}
        temporary = self.path.with_name(self.path.name + ".new")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, "".join(f"{at:.6f} {sig}\n" for sig, at in self._live.items()).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        _sync_directory(self.path.parent)
        fd, self._fd = self._fd, os.open(self.path, os.O_WRONLY | os.O_APPEND)
        if fd is not None:
            os.close(fd)
        self._lines = len(self._live)
        self._compact_at = max(COMPACT_MIN_LINES, 2 * self._lines)

    def append(self, signature: str, forget_at: float) -> None:
        """Record one accepted signature durably. Raises ReplayLogError when the disk refuses."""
        line = f"{forget_at:.6f} {signature}\n".encode()
        with self._lock:
            if self._fd is None:
                raise ReplayLogError(f"The replay log {self.path} is not open.")
            try:
                os.write(self._fd, line)
                _sync_data(self._fd)
                self._live[signature] = forget_at
                self._lines += 1
                if self._lines >= self._compact_at:
                    self._rewrite()
            except OSError as exc:
                raise ReplayLogError(f"Cannot write the replay log {self.path}: {exc.strerror}.") from exc

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        self._close_lock()

    def _close_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None


def _sync_data(fd: int) -> None:
    getattr(os, "fdatasync", os.fsync)(fd)


def _sync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Verifier:
    """Checks signed requests for one secret, and remembers accepted signatures until they would be stale anyway.

    With a `ReplayLog`, call `load()` before the first request and `await record(accepted)` after each
    `verify()` and before acting on the request: then a restart forgets nothing.
    """

    def __init__(
        self,
        secret: bytes,
        skew_s: float = DEFAULT_SKEW_S,
        clock: Callable[[], float] = time.time,
        replay_log: ReplayLog | None = None,
    ) -> None:
        self._secret = secret
        self._skew_s = skew_s
        self._clock = clock
        self._log = replay_log
        self._loaded = replay_log is None
        self._seen: dict[str, float] = {}

    def load(self) -> None:
        """Open the replay log and remember what it holds (blocking: call it before serving)."""
        if self._log is not None:
            self._seen.update(self._log.open())
            self._loaded = True

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    def verify(self, method: str, path_qs: str, body: bytes, timestamp: str | None, provided: str | None) -> Accepted:
        """Raise AuthError unless the request is signed, fresh and new; remember it in memory."""
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
        if not self._loaded:
            raise AuthError("starting", "The runner is still starting; retry in a moment.")
        return self._remember(expected, sent_at + 2 * self._skew_s, now)

    def _remember(self, sig: str, forget_at: float, now: float) -> Accepted:
        if sig in self._seen:
            raise AuthError(
                "replayed",
                "This exact signed request was already received (the runner remembers signatures across "
                "restarts); sign each request anew.",
            )
        if len(self._seen) >= MAX_REMEMBERED:
            self._seen = {s: at for s, at in self._seen.items() if at > now}
            if len(self._seen) >= MAX_REMEMBERED:
                raise AuthError("overloaded", "Too many signed requests in the replay window; slow down.")
        self._seen[sig] = forget_at
        return Accepted(sig, forget_at)

    async def record(self, accepted: Accepted) -> None:
        """Write `accepted` to the replay log, durably, off the event loop. Raises ReplayLogError."""
        if self._log is not None:
            await asyncio.to_thread(self._log.append, accepted.signature, accepted.forget_at)


Handler = Callable[..., Awaitable[object]]


def make_auth_middleware(
    verifier: Verifier, public_paths: Collection[str], on_failure: Callable[[str], None] | None = None
) -> Callable[..., Awaitable[object]]:
    """An aiohttp middleware: 401 to a request on a non-public path that fails `verifier`, and 503 when the
    accepted signature cannot be recorded. A request is handled only once its signature is on disk."""
    from aiohttp import web

    @web.middleware
    async def auth_middleware(request: web.Request, handler: Handler) -> object:
        if request.path in public_paths:
            return await handler(request)
        body = await request.read()
        try:
            accepted = verifier.verify(
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
            if exc.reason == "starting":
                raise web.HTTPServiceUnavailable(text=exc.message, headers={"Retry-After": "1"}) from None
            raise web.HTTPUnauthorized(reason="Unauthorized", text=exc.message) from None
        try:
            await verifier.record(accepted)
        except ReplayLogError as exc:
            log.error("cannot record the signature of %s %s: %s", request.method, request.path, exc)
            if on_failure is not None:
                on_failure("unrecorded")
            raise web.HTTPServiceUnavailable(
                text="The runner could not record this request on its disk, so it did nothing; retry later. "
                "The runner's log says why."
            ) from None
        return await handler(request)

    return auth_middleware
