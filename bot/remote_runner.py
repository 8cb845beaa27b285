"""A remote runner daemon as the dispatcher's `JobRunner` (and as a problem validator), over `RunnerClient`.

`run` posts the job under the dispatcher's job key, which the runner treats as its idempotency key: a repeat
(after a lost connection, or a dispatcher that restarted and requeued the job) follows the job the runner
already has instead of starting a second. `attach` follows a job this process posted earlier; after a bot
restart it knows none, so the dispatcher requeues, and the re-post attaches through that same idempotency.
"""

from __future__ import annotations

import logging

from bot.bot_settings import RunnerConfig
from bot.core.dispatch import EventCallback
from bot.core.errors import RunnerLostError, UserFacingError
from bot.runner_client import RunnerClient, RunnerError
from runner.api import HealthInfo, JobEvent, JobRequest, SubmissionResult, ValidateReport, ValidateRequest

log = logging.getLogger(__name__)


class RemoteRunner:
    """One runner daemon serving one GPU type, `slots` jobs at a time."""

    def __init__(self, config: RunnerConfig, client: RunnerClient) -> None:
        self._config = config
        self._client = client
        self._jobs: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self._config.name

    @property
    def gpu_type(self) -> str:
        return self._config.gpu_type

    @property
    def slots(self) -> int:
        return self._config.slots

    @property
    def url(self) -> str:
        return self._client.base_url

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        remote = request.model_copy(update={"submission_id": job_key})
        try:
            accepted = await self._client.submit(remote)
        except RunnerError as exc:
            raise RunnerLostError(f"could not post {job_key}: {exc.message} ({exc.code})") from exc
        self._jobs[job_key] = accepted.job_id
        log.info(
            "%s: submission %s posted as runner job %s (queue position %s, new %s)",
            self.name,
            request.submission_id,
            accepted.job_id,
            accepted.queue_position,
            accepted.created,
        )
        result = await self._follow(job_key, accepted.job_id, on_event)
        if result is None:
            raise RunnerLostError(f"the runner cancelled {job_key}")
        return result.model_copy(update={"submission_id": request.submission_id})

    async def attach(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        job_id = self._jobs.get(job_key)
        if job_id is None:
            return None
        return await self._follow(job_key, job_id, on_event)

    async def _follow(self, job_key: str, job_id: str, on_event: EventCallback) -> SubmissionResult | None:
        async def deliver(event: JobEvent) -> None:
            maybe = on_event(event)
            if maybe is not None:
                await maybe

        # A cancelled follower (a dispatcher stopping) keeps the mapping, so that a restart in this process can
        # attach again; a finished or lost job forgets it.
        try:
            result = await self._client.wait_result(job_id, deliver)
        except RunnerError as exc:
            self._jobs.pop(job_key, None)
            raise RunnerLostError(f"lost {job_key} (runner job {job_id}): {exc.message} ({exc.code})") from exc
        self._jobs.pop(job_key, None)
        return result

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        try:
            return await self._client.validate(request)
        except RunnerError as exc:
            raise UserFacingError(
                f"Runner `{self.name}` could not run the self-test: {exc.message} ({exc.code}). Try again later."
            ) from exc

    async def health(self) -> HealthInfo:
        return await self._client.health()
