"""Client of a remote GPU runner's HTTP API (DESIGN §3): submit, status, streamed events with resume, cancel.

Every request is signed (runner.auth). Calls that are idempotent (GET, DELETE, POST /v1/jobs, which is
idempotent on the submission id) are retried on connection errors; the event stream reconnects after the
last event number it has. Errors come back as RunnerError(status, code, message). This module imports the
wire models (pydantic) and never torch.

Transport: an https:// runner's certificate is checked against the system's CAs, or against `ca_file` (a
private CA or a self-signed certificate). Plain http:// is refused unless the host is this machine (loopback)
or `allow_plain_http` says the network is trusted: the secret never crosses the wire, but sources and results
would, readable and alterable (answers are not signed).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import aiohttp
from pydantic import BaseModel, ValidationError
from yarl import URL

from contract.errors import ApiError, RunnerClientError, RunnerRefusedError
from contract.wire import (
    HealthInfo,
    JobAccepted,
    JobEvent,
    JobRequest,
    JobStatus,
    SubmissionResult,
    ValidateReport,
    ValidateRequest,
)
from runner.auth import sign_headers

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=BaseModel)
EventCallback = Callable[[JobEvent], Awaitable[None] | None]

# The runner sends a blank line every 15 s on an idle stream; three missed ones mean the connection is dead.
STREAM_READ_TIMEOUT_S = 45.0
VALIDATE_TIMEOUT_S = 900.0


class RunnerError(RunnerClientError):
    """The runner refused a call or could not be reached. `status` is 0 when no HTTP answer came."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"runner answered {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def _cause(exc: BaseException) -> str:
    """What went wrong on the connection, without the host and port that aiohttp's messages carry."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "its TLS certificate is not trusted: check ca_file"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "the TLS handshake failed"
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, ConnectionRefusedError):
        return "connection refused"
    return type(exc).__name__


def _error_from(status: int, body: bytes) -> RunnerError:
    try:
        error = ApiError.model_validate_json(body).error
        return RunnerError(status, error.code, error.message)
    except ValidationError:
        return RunnerError(status, "http_error", body.decode("utf-8", "replace")[:300] or f"HTTP {status}")


class RunnerConfigError(RunnerRefusedError):
    """A runner's URL or TLS settings cannot be used as given; the message says what to change."""


def sends_in_clear(url: str) -> bool:
    """Whether requests to `url` would cross a network unencrypted: http:// to a host that is not loopback."""
    parsed = URL(url)
    if parsed.scheme != "http":
        return False
    host = (parsed.host or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


PLAIN_HTTP_REFUSED = (
    "The runner URL uses plain http:// to another host: job sources and results would cross the network "
    "unencrypted, and a machine on the path could alter the results. Serve the runner over HTTPS "
    "(RUNNER_TLS_CERT_FILE and RUNNER_TLS_KEY_FILE, or a TLS proxy in front) and use an https:// URL, or, on a "
    "network you trust, allow plain HTTP (ARENA_FLEET_ALLOW_PLAIN_HTTP=true on the dispatchers for the fleet's "
    "runners, or --allow-plain-http for arena submit)."
)


def client_ssl(ca_file: str | Path | None) -> ssl.SSLContext | bool:
    """What aiohttp's `ssl=` takes: True (the system's CAs), or a context that trusts `ca_file`."""
    if ca_file is None:
        return True
    try:
        return ssl.create_default_context(cafile=str(ca_file))
    except (OSError, ssl.SSLError) as exc:
        raise RunnerConfigError(
            f"Cannot load the runner's CA bundle {ca_file}: {getattr(exc, 'strerror', None) or exc}. "
            f"Give a readable PEM file with the certificate of the CA that signed the runner's certificate."
        ) from exc


class RunnerClient:
    """One runner. Use as `async with RunnerClient(url, secret) as runner:`, or pass your own session."""

    def __init__(
        self,
        base_url: str,
        secret: bytes,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout_s: float = 30.0,
        retries: int = 3,
        retry_delay_s: float = 1.0,
        ca_file: str | Path | None = None,
        allow_plain_http: bool = False,
    ) -> None:
        """`ca_file`: trust the runner's certificate through this PEM bundle; `allow_plain_http`: the network
        to a non-loopback http:// runner is trusted. Raises RunnerConfigError when the URL or file won't do."""
        self.base_url = base_url.rstrip("/")
        if sends_in_clear(self.base_url) and not allow_plain_http:
            raise RunnerConfigError(PLAIN_HTTP_REFUSED)
        self._ssl = client_ssl(ca_file)
        self._secret = secret
        self._session = session
        self._owns_session = session is None
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._retries = retries
        self._retry_delay_s = retry_delay_s

    async def __aenter__(self) -> RunnerClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    def _signed(self, method: str, path: str, body: bytes) -> tuple[URL, dict[str, str]]:
        url = URL(self.base_url + path, encoded=True)
        headers = sign_headers(self._secret, method, url.raw_path_qs, body)
        if body:
            headers["Content-Type"] = "application/json"
        return url, headers

    async def _call(
        self, method: str, path: str, body: bytes = b"", *, retry: bool, timeout: aiohttp.ClientTimeout | None = None
    ) -> bytes:
        """One signed call; the answer's body, or RunnerError. Retries connection errors when `retry`."""
        attempts = self._retries if retry else 1
        for attempt in range(1, attempts + 1):
            url, headers = self._signed(method, path, body)  # signed anew: the runner rejects replays
            try:
                async with self._http().request(
                    method, url, data=body or None, headers=headers, timeout=timeout or self._timeout, ssl=self._ssl
                ) as response:
                    data = await response.read()
                    if response.status >= 400:
                        raise _error_from(response.status, data)
                    return data
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                # The address is logged and kept out of the error, whose message can reach people. Debug level:
                # the caller logs what it means (a probe of a runner known to be down fails every few seconds).
                if attempt == attempts:
                    log.debug("%s %s%s: no answer (%r)", method, self.base_url, path, exc)
                    raise RunnerError(0, "unreachable", f"No answer from the runner ({_cause(exc)})") from exc
                log.info("%s %s%s failed (%r); retry %d of %d", method, self.base_url, path, exc, attempt, attempts - 1)
                await asyncio.sleep(self._retry_delay_s * attempt)
        raise AssertionError("unreachable")

    @staticmethod
    def _parse(model: type[ModelT], data: bytes) -> ModelT:
        try:
            return model.model_validate_json(data)
        except ValidationError as exc:
            raise RunnerError(200, "bad_response", f"The runner's answer is not a {model.__name__}: {exc}") from exc

    async def submit(self, request: JobRequest) -> JobAccepted:
        """Queue a job. Safe to repeat: the runner answers with the job this submission id already has."""
        data = await self._call("POST", "/v1/jobs", request.model_dump_json().encode(), retry=True)
        return self._parse(JobAccepted, data)

    async def find(self, submission_id: str) -> JobStatus | None:
        """The job posted under `submission_id` (its idempotency key), or None when the runner holds none."""
        from urllib.parse import quote

        try:
            data = await self._call("GET", f"/v1/jobs?submission_id={quote(submission_id, safe='')}", retry=True)
        except RunnerError as exc:
            if exc.status == 404:
                return None
            raise
        return self._parse(JobStatus, data)

    async def status(self, job_id: str) -> JobStatus:
        return self._parse(JobStatus, await self._call("GET", f"/v1/jobs/{job_id}", retry=True))

    async def cancel(self, job_id: str) -> JobStatus:
        return self._parse(JobStatus, await self._call("DELETE", f"/v1/jobs/{job_id}", retry=True))

    async def health(self, *, retry: bool = True, timeout_s: float | None = None) -> HealthInfo:
        """The runner's health; `retry=False` and a short `timeout_s` make it a quick probe."""
        timeout = aiohttp.ClientTimeout(total=timeout_s) if timeout_s is not None else None
        return self._parse(HealthInfo, await self._call("GET", "/v1/health", retry=retry, timeout=timeout))

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        """Run a problem's admission self-test on the runner (not retried: it costs a GPU slot)."""
        timeout = aiohttp.ClientTimeout(total=VALIDATE_TIMEOUT_S)
        data = await self._call(
            "POST", "/v1/problems/validate", request.model_dump_json().encode(), retry=False, timeout=timeout
        )
        return self._parse(ValidateReport, data)

    async def events(self, job_id: str, after: int = 0) -> AsyncIterator[JobEvent]:
        """The job's events numbered above `after`, live, ending with `done`. Reconnects after a dropped
        connection from the last event received; gives up after `retries` failures in a row."""
        failures = 0
        while True:
            path = f"/v1/jobs/{job_id}/events?after={after}"
            try:
                async for event in self._stream_once(path):
                    failures = 0
                    after = event.seq
                    yield event
                    if event.type == "done":
                        return
                raise aiohttp.ClientPayloadError("the event stream ended before `done`")
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as exc:
                failures += 1
                if failures >= self._retries:
                    log.debug("job %s: the event stream from %s keeps failing (%r)", job_id, self.base_url, exc)
                    raise RunnerError(
                        0, "unreachable", f"The event stream of job {job_id} keeps failing ({_cause(exc)})"
                    ) from exc
                log.info(
                    "job %s: event stream from %s broke after %d (%r); reconnecting", job_id, self.base_url, after, exc
                )
                await asyncio.sleep(self._retry_delay_s * failures)

    async def _stream_once(self, path: str) -> AsyncIterator[JobEvent]:
        url, headers = self._signed("GET", path, b"")
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._timeout.total, sock_read=STREAM_READ_TIMEOUT_S)
        async with self._http().get(url, headers=headers, timeout=timeout, ssl=self._ssl) as response:
            if response.status >= 400:
                raise _error_from(response.status, await response.read())
            pending = b""
            # Lines are split here rather than by readline(), whose limit a large final result could exceed.
            async for chunk in response.content.iter_any():
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield self._parse(JobEvent, line)

    async def wait_result(self, job_id: str, on_event: EventCallback | None = None) -> SubmissionResult | None:
        """Follow the job to its end; the result, or None when it was cancelled."""
        result: SubmissionResult | None = None
        async for event in self.events(job_id):
            if on_event is not None:
                maybe = on_event(event)
                if maybe is not None:
                    await maybe
            if event.type == "done":
                result = event.result
        return result
