"""The CLI's side of the public API: where the server is and which token to send (`arena login` keeps both in the
user's config folder, mode 0600), the calls, and the API's refusals as `ServerError`s with the API's stable codes.

Exit codes of the commands that speak to a server (`arena submit --server`, `arena submissions`, `arena login`):
0 done (a submission passed), 1 a submission failed or erred, 2 the request was refused (bad input: the problem,
the file, a dtype, an option; cancelling a submission that had finished), 3 the token is missing, invalid,
expired, revoked or lacks the scope, or the user is banned, 4 rate limited (try again after `retry_after_s`), 5 the
server cannot be reached or failed, 130 Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from pydantic import BaseModel, ValidationError

from api.batch_models import BatchAccepted, BatchView
from api.submission_models import (
    SubmissionAccepted,
    SubmissionCancelled,
    SubmissionCode,
    SubmissionEventView,
    SubmissionPage,
    SubmissionView,
)
from contract.wire import ProfileDiff
from core.errors import UserFacingError

EXIT_FAILED = 1
EXIT_REFUSED = 2
EXIT_AUTH = 3
EXIT_RATE_LIMITED = 4
EXIT_UNAVAILABLE = 5
EXIT_CODES_HELP = (
    "exit codes: 0 done (passed), 1 the submission failed or erred, 2 refused input (or cancelling a finished "
    "submission), 3 token missing, invalid, "
    "expired, revoked or without the scope (or banned), 4 rate limited, 5 server unreachable or failing, 130 Ctrl-C"
)
TOKEN_ENV = "ARENA_TOKEN"
SERVER_ENV = "ARENA_SERVER"
CONFIG_NAME = "server.json"
# A dropped event stream is opened again (with Last-Event-ID) for this long before the CLI gives up: a server
# restarting (a deployment rolling its replicas) takes seconds, more on a busy host.
RECONNECT_FOR_S = 120.0
RECONNECT_WAIT_S = (0.5, 1.0, 2.0, 5.0)
REQUEST_TIMEOUT_S = 60.0
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
Model = TypeVar("Model", bound=BaseModel)


class ServerError(UserFacingError):
    """A refusal or failure of the server: the API's stable `code`, its HTTP `status` (0: no answer) and detail."""

    def __init__(self, code: str, message: str, status: int = 0, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def exit_code(self) -> int:
        if self.status == 429:
            return EXIT_RATE_LIMITED
        if self.status in (401, 403):
            return EXIT_AUTH
        if self.status == 0 or self.status >= 500:
            return EXIT_UNAVAILABLE
        return EXIT_REFUSED

    def as_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "status": self.status, "message": self.message}
        if self.retry_after_s is not None:
            error["retry_after_s"] = self.retry_after_s
        return {"error": error}


def report(exc: UserFacingError, as_json: bool) -> int:
    """Say what went wrong (stdout as `{"error": {...}}` with --json, else one line on stderr); the exit code."""
    error = exc if isinstance(exc, ServerError) else ServerError("invalid_input", exc.message, 400)
    if as_json:
        print(json.dumps(error.as_json(), indent=2))
    else:
        retry = f" Try again in {error.retry_after_s:.0f} s." if error.retry_after_s else ""
        print(f"error: {error.message}{retry} ({error.code})", file=sys.stderr)
    return error.exit_code


def _submission_form(slug: str, dtype: str, mode: str, gpu: str | None) -> aiohttp.FormData:
    """The text fields of a submission's multipart body; the caller adds its file (or a batch's files)."""
    form = aiohttp.FormData()
    form.add_field("problem", slug)
    form.add_field("dtype", dtype)
    form.add_field("mode", mode)
    if gpu:
        form.add_field("gpu", gpu)
    return form


# -- where the server is, and the token ------------------------------------------------------------------------


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kernel-arena" / CONFIG_NAME


def server_url(text: str) -> str:
    """The server's base URL, checked: https://, or http:// only to this machine (a token must not cross a network
    in the clear). Raises UserFacingError saying how to write it."""
    text = text.strip().rstrip("/")
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserFacingError(f"{text!r} is not a server URL; write it as https://HOST (or http://127.0.0.1:PORT).")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise UserFacingError(f"{text!r} has a port that is not a number from 0 to 65535.") from None
    if parts.scheme == "http" and parts.hostname not in _LOCAL_HOSTS:
        raise UserFacingError(
            f"{text} is plain http:// to another machine, where the token would travel unencrypted; use https://."
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UserFacingError(f"{text!r} has a path; give the server's base URL, e.g. https://arena.example.org.")
    return text


@dataclass(frozen=True)
class Login:
    server: str
    token: str


def save_login(login: Login) -> Path:
    """Keep the server and the token in the config folder, readable by the user alone (0600, folder 0700)."""
    path = config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)  # a file that existed keeps its mode through O_CREAT
            json.dump({"server": login.server, "token": login.token}, out)
            out.write("\n")
    except OSError as exc:
        raise UserFacingError(f"Cannot write {path}: {exc.strerror}. Check the folder's permissions.") from exc
    return path


def load_login(server: str | None) -> Login:
    """The server (`--server`, else ARENA_SERVER, else the one `arena login` kept) and the token (ARENA_TOKEN, else
    the kept one, when it was kept for that server)."""
    kept: dict[str, str] = {}
    path = config_path()
    if path.is_file():
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserFacingError(f"Cannot read {path} ({exc}); run `arena login --server URL` again.") from exc
    chosen = server or os.environ.get(SERVER_ENV) or kept.get("server")
    if not chosen:
        raise UserFacingError("No server: pass --server URL, or run `arena login --server URL` once.")
    url = server_url(chosen)
    token = os.environ.get(TOKEN_ENV) or (kept.get("token") if kept.get("server") == url else None)
    if not token:
        raise ServerError(
            "token_missing",
            f"No token for {url}: run `arena login --server {url}`, or set {TOKEN_ENV}.",
            401,
        )
    return Login(url, token.strip())


# -- the calls ---------------------------------------------------------------------------------------------------


class ArenaServer:
    """One server, one token, one HTTP session: `async with ArenaServer(login) as server: ...`."""

    def __init__(self, login: Login) -> None:
        self.login = login
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ArenaServer:
        self._session = aiohttp.ClientSession(
            self.login.server,
            headers={"Authorization": f"Bearer {self.login.token}", "User-Agent": "arena-cli"},
            timeout=aiohttp.ClientTimeout(total=None, connect=REQUEST_TIMEOUT_S, sock_read=REQUEST_TIMEOUT_S),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "use ArenaServer in `async with`"
        return self._session

    def _unreachable(self, exc: BaseException) -> ServerError:
        reason = getattr(exc, "os_error", None) or exc
        return ServerError(
            "unreachable",
            f"Cannot reach the arena at {self.login.server} ({reason}). Check the URL and that the server runs.",
        )

    async def _refusal(self, response: aiohttp.ClientResponse) -> ServerError:
        text = await response.text()
        try:
            body = json.loads(text)
            return ServerError(body["code"], body["detail"], response.status, body.get("retry_after_s"))
        except (ValueError, KeyError, TypeError):
            return ServerError(
                "unavailable" if response.status >= 500 else "refused",
                f"The server answered {response.status} {response.reason} without problem details.",
                response.status,
            )

    async def _call(self, model: type[Model], method: str, path: str, **kw: Any) -> Model:
        try:
            async with self.session.request(method, path, **kw) as response:
                if response.status >= 400:
                    raise await self._refusal(response)
                body = await response.read()
        except aiohttp.ClientError as exc:
            raise self._unreachable(exc) from exc
        except TimeoutError as exc:
            raise ServerError("unreachable", f"The arena at {self.login.server} did not answer in time.") from exc
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            raise ServerError(
                "unexpected_answer", f"The server's answer to {method} {path} is not what this CLI reads ({exc})."
            ) from exc

    async def submit(
        self,
        slug: str,
        file_name: str,
        data: bytes,
        *,
        dtype: str,
        mode: str,
        gpu: str | None = None,
        profile_case: int | None = None,
        idempotency_key: str | None = None,
        world_size: int = 1,
    ) -> SubmissionAccepted:
        form = _submission_form(slug, dtype, mode, gpu)
        if profile_case is not None:
            form.add_field("profile_case", str(profile_case))
        if world_size != 1:  # a server that predates distributed problems refuses the field: sent only when needed
            form.add_field("world_size", str(world_size))
        form.add_field("file", data, filename=file_name, content_type="application/octet-stream")
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return await self._call(SubmissionAccepted, "POST", "/v1/submissions", data=form, headers=headers)

    async def submit_batch(
        self,
        slug: str,
        files: list[tuple[str, bytes]],
        *,
        dtype: str,
        mode: str,
        gpu: str | None = None,
        idempotency_key: str | None = None,
    ) -> BatchAccepted:
        form = _submission_form(slug, dtype, mode, gpu)
        for file_name, data in files:
            form.add_field("file", data, filename=file_name, content_type="application/octet-stream")
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return await self._call(BatchAccepted, "POST", "/v1/submissions/batches", data=form, headers=headers)

    async def batch(self, batch_id: int) -> BatchView:
        return await self._call(BatchView, "GET", f"/v1/submissions/batches/{batch_id}")

    async def follow_batch(self, batch_id: int) -> AsyncIterator[SubmissionEventView | BatchView]:
        """Every variant's events, then the ranked table (a BatchView), opening the stream again where it was when
        it drops."""
        loop = asyncio.get_running_loop()
        cursor: str | None = None
        failures = 0
        down_since: float | None = None
        while True:
            try:
                async for event_id, kind, data in self._frames(f"/v1/submissions/batches/{batch_id}/events", cursor):
                    failures, down_since = 0, None
                    if kind == "batch":
                        yield BatchView.model_validate_json(data)
                        return
                    cursor = event_id or cursor
                    yield SubmissionEventView.model_validate_json(data)
            except (aiohttp.ClientError, TimeoutError, ServerError) as exc:
                if isinstance(exc, ServerError) and exc.exit_code != EXIT_UNAVAILABLE:
                    raise
                down_since = loop.time() if down_since is None else down_since
                if loop.time() - down_since > RECONNECT_FOR_S:
                    raise self._unreachable(exc) from exc
            await asyncio.sleep(RECONNECT_WAIT_S[min(failures, len(RECONNECT_WAIT_S) - 1)])
            failures += 1

    async def submission(self, submission_id: int) -> SubmissionView:
        return await self._call(SubmissionView, "GET", f"/v1/submissions/{submission_id}")

    async def cancel(self, submission_id: int) -> SubmissionCancelled:
        """Withdraw the submission before it finished; `submission_finished` (409) when it had finished."""
        return await self._call(SubmissionCancelled, "DELETE", f"/v1/submissions/{submission_id}")

    async def code(self, submission_id: int) -> SubmissionCode:
        return await self._call(SubmissionCode, "GET", f"/v1/submissions/{submission_id}/code")

    async def profile_diff(self, a: int, b: int | None = None) -> ProfileDiff:
        """Run `a`'s profile beside `b`'s (None: the server picks B, as `b_chosen` says)."""
        query = {"a": str(a)} if b is None else {"a": str(a), "b": str(b)}
        return await self._call(ProfileDiff, "GET", "/v1/profiles/diff", params=query)

    async def page(self, problem: str | None, before: int | None, limit: int) -> SubmissionPage:
        query: dict[str, str] = {"limit": str(limit)}
        if problem:
            query["problem"] = problem
        if before:
            query["before"] = str(before)
        return await self._call(SubmissionPage, "GET", "/v1/submissions", params=query)

    async def _frames(self, path: str, last_id: str | None) -> AsyncIterator[tuple[str | None, str, str]]:
        """One connection's Server-Sent Events as (id, event, data), until the server ends the stream."""
        headers = {"Accept": "text/event-stream"}
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        # No read timeout: the server sends a comment line at least every 15 s while nothing happens.
        timeout = aiohttp.ClientTimeout(total=None, connect=REQUEST_TIMEOUT_S, sock_read=REQUEST_TIMEOUT_S * 2)
        async with self.session.get(path, headers=headers, timeout=timeout) as response:
            if response.status >= 400:
                raise await self._refusal(response)
            fields: dict[str, str] = {}
            data: list[str] = []
            async for raw in response.content:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif line.startswith(("id:", "event:")):
                    key, _, value = line.partition(":")
                    fields[key] = value.removeprefix(" ")
                elif not line:
                    if data:
                        yield fields.get("id"), fields.get("event", "message"), "\n".join(data)
                    fields, data = {}, []

    async def events(self, submission_id: int, after: int | None = None) -> AsyncIterator[SubmissionEventView]:
        """One connection's events (after the kept event `after`), until the server ends the stream."""
        last = None if after is None else str(after)
        async for _, _, data in self._frames(f"/v1/submissions/{submission_id}/events", last):
            yield SubmissionEventView.model_validate_json(data)

    async def follow(self, submission_id: int, after: int | None = None) -> AsyncIterator[SubmissionEventView]:
        """Every event to the `result`, opening the stream again after the last kept event when it drops."""
        loop = asyncio.get_running_loop()
        failures = 0
        down_since: float | None = None
        while True:
            try:
                async for event in self.events(submission_id, after):
                    failures, down_since = 0, None
                    if event.id is not None:
                        after = event.id
                    yield event
                    if event.type == "result":
                        return
            except (aiohttp.ClientError, TimeoutError, ServerError) as exc:
                if isinstance(exc, ServerError) and exc.exit_code != EXIT_UNAVAILABLE:
                    raise  # a refusal (the token, the id) is no outage: asking again changes nothing
                down_since = loop.time() if down_since is None else down_since
                if loop.time() - down_since > RECONNECT_FOR_S:
                    raise self._unreachable(exc) from exc
            else:
                # Ended without a `result` (a server restarting, or resumed after the end): ask for the result.
                view = await self.submission(submission_id)
                if view.result is not None:
                    return
            await asyncio.sleep(RECONNECT_WAIT_S[min(failures, len(RECONNECT_WAIT_S) - 1)])
            failures += 1
