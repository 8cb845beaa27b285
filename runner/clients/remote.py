"""A remote runner daemon as the dispatcher's `JobRunner` (and as a problem validator), over `RunnerClient`.

`run` posts the job under the dispatcher's job key, which the runner treats as its idempotency key: a repeat
(after a lost connection, or a dispatcher that restarted and requeued the job) follows the job the runner
already has instead of starting a second. `attach` follows a job this process posted earlier, from the first
event not yet delivered; after a bot restart it knows none, so the dispatcher requeues, and the re-post
attaches through that same idempotency.

Errors keep two cases apart, because the dispatcher treats them differently:
- the runner does not answer (connection refused or timed out, or a proxy in front of it says the backend is
  down), or has no room: `RunnerUnavailableError`, which costs the job no attempt;
- the runner answers and cannot finish the job (it no longer has it, or refuses it): `RunnerLostError`.
The runner's address goes to the log only; error messages name the runner.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from runner.api import HealthInfo, JobRequest, SubmissionResult, ValidateReport, ValidateRequest
from runner.client import EventCallback, RunnerLostError, RunnerRefusedError, RunnerUnavailableError
from runner.clients.http import RunnerClient, RunnerError

log = logging.getLogger(__name__)

# Answers that say "not now" rather than "not this job": a proxy whose backend is down, a full queue.
UNAVAILABLE_STATUSES = frozenset({0, 429, 502, 503, 504})
PROBE_TIMEOUT_S = 5.0


def is_unavailable(exc: RunnerError) -> bool:
    """The runner did not answer the call, or had no room for it: nothing was lost."""
    return exc.status in UNAVAILABLE_STATUSES


@dataclass
class _Followed:
    """A job this process posted: the runner's id for it, and the last event delivered."""

    job_id: str
    seq: int = 0


class RemoteRunner:
    """One runner daemon serving one GPU type, `slots` jobs at a time."""

    def __init__(self, name: str, gpu_type: str, slots: int, client: RunnerClient) -> None:
        self._name = name
        self._gpu_type = gpu_type
        self._slots = slots
        self._client = client
        self._jobs: dict[str, _Followed] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def gpu_type(self) -> str:
        return self._gpu_type

    @property
    def slots(self) -> int:
        return self._slots

    @property
    def url(self) -> str:
        return self._client.base_url

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        remote = request.model_copy(update={"submission_id": job_key})
        try:
            accepted = await self._client.submit(remote)
        except RunnerError as exc:
            raise self._failure(exc, f"could not post {job_key}", accepted=False) from exc
        known = self._jobs.get(job_key)
        if known is None or known.job_id != accepted.job_id:
            self._jobs[job_key] = _Followed(accepted.job_id)
        log.info(
            "%s: submission %s posted as runner job %s (queue position %s, new %s)",
            self.name,
            request.submission_id,
            accepted.job_id,
            accepted.queue_position,
            accepted.created,
        )
        result = await self._follow(job_key, on_event)
        if result is None:
            raise RunnerLostError(f"the runner cancelled {job_key}")
        return result.model_copy(update={"submission_id": request.submission_id})

    async def attach(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        if job_key not in self._jobs:
            return None
        return await self._follow(job_key, on_event)

    async def probe(self) -> bool:
        """Whether the runner answers now: any HTTP answer from it counts (a refusal shows on the next job)."""
        try:
            await self._client.health(retry=False, timeout_s=PROBE_TIMEOUT_S)
        except RunnerError as exc:
            return not is_unavailable(exc)
        return True

    async def _follow(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        followed = self._jobs[job_key]
        result: SubmissionResult | None = None
        # A follower that is cancelled (a dispatcher stopping) or cut off (the runner stopped answering) keeps
        # the mapping, so that `attach` picks the job up again after the last event delivered; a finished or
        # lost job forgets it.
        try:
            async for event in self._client.events(followed.job_id, after=followed.seq):
                maybe = on_event(event)
                if maybe is not None:
                    await maybe
                followed.seq = event.seq
                if event.type == "done":
                    result = event.result
        except RunnerError as exc:
            if not is_unavailable(exc):
                self._jobs.pop(job_key, None)
            raise self._failure(exc, f"following {job_key} (runner job {followed.job_id})", accepted=True) from exc
        self._jobs.pop(job_key, None)
        return result

    def _failure(self, exc: RunnerError, what: str, *, accepted: bool) -> Exception:
        log.warning("%s (%s): %s: %s", self.name, self.url, what, exc)
        if is_unavailable(exc):
            answer = "no answer" if exc.status == 0 else f"HTTP {exc.status} {exc.code}"
            return RunnerUnavailableError(f"{what}: {answer}", accepted=accepted)
        return RunnerLostError(f"{what}: the runner answered HTTP {exc.status} {exc.code}")

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        try:
            return await self._client.validate(request)
        except RunnerError as exc:
            log.warning("%s (%s): the self-test call failed: %s", self.name, self.url, exc)
            if is_unavailable(exc) or exc.code == "http_error":
                raise RunnerRefusedError(
                    f"Runner `{self.name}` is not answering, so the self-test did not run. Try again later, "
                    "or check the runner with `/mod runners`."
                ) from exc
            raise RunnerRefusedError(
                f"Runner `{self.name}` could not run the self-test: {exc.message} ({exc.code}). Try again later."
            ) from exc

    async def health(self) -> HealthInfo:
        return await self._client.health()
