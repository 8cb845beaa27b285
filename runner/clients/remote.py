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

A runner is configured with the GPU type it serves, and its jobs land on that type's boards. Before it gets
its first job, and again after every time it stopped answering (the host behind the address may have
changed), its health must report that type (`runner.gpus` decides which spellings are the same model). One
that reports another is refused: it counts as not answering, so no job goes to it (the dispatcher requeues
the job at no attempt's cost and probes it like a runner that is down, and a probe succeeds only once the
types agree). A daemon too old to report any type is used, with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

import aiohttp

from contract.errors import RunnerLostError, RunnerRefusedError, RunnerUnavailableError
from contract.names import rank_pool
from contract.runner_client import EventCallback
from contract.wire import HealthInfo, JobRequest, SubmissionResult, ValidateReport, ValidateRequest
from runner.clients.http import RunnerClient, RunnerError
from runner.gpus import canonical_gpu_type, gpu_type_for

log = logging.getLogger(__name__)

# Answers that say "not now" rather than "not this job": a proxy whose backend is down, a full queue.
UNAVAILABLE_STATUSES = frozenset({0, 429, 502, 503, 504})
PROBE_TIMEOUT_S = 5.0


def is_unavailable(exc: RunnerError) -> bool:
    """The runner did not answer the call, or had no room for it: nothing was lost."""
    return exc.status in UNAVAILABLE_STATUSES


def reported_gpu_types(health: HealthInfo) -> set[str] | None:
    """The board keys a runner's health says its jobs run on, or None when it says nothing usable (a daemon
    from before the registry, on a CPU): its own summary first, else each GPU's key (or its name's)."""
    if health.gpu_type is not None:
        return {health.gpu_type}
    if health.device == "gpu" and health.gpus:
        return {gpu.gpu_type or gpu_type_for(gpu.name) for gpu in health.gpus}
    return None


def gpu_type_mismatch(declared: str, health: HealthInfo) -> str | None:
    """Why a runner configured to serve `declared` must not take its jobs, given its health; None when it may.

    Old spellings count as the model they name (`h100-80gb-hbm3` is `h100`)."""
    reported = reported_gpu_types(health)
    if reported is None:
        return None
    # The client of a runner's slots of N ranks serves the rank pool `<type>xN` (contract.names.rank_pool).
    for ranks in health.rank_slots:
        if any(declared == rank_pool(t, ranks) for t in reported):
            declared = declared.removesuffix(f"x{ranks}")
            break
    wanted = canonical_gpu_type(declared)
    others = sorted(t for t in reported if canonical_gpu_type(t) != wanted)
    if not others:
        return None
    if health.gpu_type is None and len(reported) > 1:
        return (
            f"configured as GPU type `{declared}`, but it serves GPUs of several types "
            f"({', '.join(f'`{t}`' for t in sorted(reported))}); a runner serves one type"
        )
    devices = ", ".join(sorted({gpu.name for gpu in health.gpus})) or ("no GPU" if health.device == "cpu" else "")
    shown = f" ({devices})" if devices else ""
    return f"configured as GPU type `{declared}`, but it reports `{', '.join(others)}`{shown}"


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
        # Whether its health agreed with `gpu_type` since it last answered, and why it disagreed when it did.
        self._checked = False
        self._refusal: str | None = None

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

    @property
    def refusal(self) -> str | None:
        """Why this runner is refused (the GPU type it reports is not the one configured), or None."""
        return self._refusal

    def check_gpu_type(self, health: HealthInfo) -> str | None:
        """Compare `health` with the configured GPU type and remember the outcome; returns the refusal or None."""
        reason = gpu_type_mismatch(self._gpu_type, health)
        if reason is not None:
            if reason != self._refusal:
                log.warning("runner %s (%s) is refused, no job goes to it: %s", self.name, self.url, reason)
        elif reported_gpu_types(health) is None and not self._checked:
            log.warning(
                "runner %s (%s) does not report its GPU type (an older daemon?); trusting the configured `%s`",
                self.name,
                self.url,
                self._gpu_type,
            )
        elif self._refusal is not None:
            log.info("runner %s now reports GPU type `%s`, as configured", self.name, self._gpu_type)
        self._refusal = reason
        self._checked = reason is None
        return reason

    async def _check(self) -> None:
        """Make sure the runner serves the configured GPU type before it gets a job (once per stretch of
        answering). Raises RunnerUnavailableError when it does not answer or is refused."""
        if self._checked:
            return
        try:
            health = await self._client.health(retry=False, timeout_s=PROBE_TIMEOUT_S)
        except RunnerError as exc:
            raise self._failure(exc, "could not check its GPU type", accepted=False) from exc
        reason = self.check_gpu_type(health)
        if reason is not None:
            raise RunnerUnavailableError(f"refused: {reason}", accepted=False)

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        await self._check()
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
            # Posted by an earlier process (a dispatcher that restarted): ask the runner for the job it holds under
            # the key, and follow it from its first event, so that it is not run a second time.
            try:
                found = await self._client.find(job_key)
            except RunnerError as exc:
                raise self._failure(exc, f"looking up {job_key}", accepted=True) from exc
            if found is None:
                return None
            self._jobs[job_key] = _Followed(found.job_id)
            log.info("%s: following %s again (runner job %s, %s)", self.name, job_key, found.job_id, found.state)
        return await self._follow(job_key, on_event)

    async def abandon(self, job_key: str) -> None:
        """Tell the runner to stop the job (`DELETE /v1/jobs/{id}`): its submission was withdrawn, and no one wants
        its result. A runner that does not answer is only logged: the job's result, if it comes, finds no lease."""
        followed = self._jobs.pop(job_key, None)
        if followed is None:
            return
        try:
            await self._client.cancel(followed.job_id)
            log.info("%s: %s withdrawn; runner job %s cancelled", self.name, job_key, followed.job_id)
        except RunnerError as exc:
            log.warning("%s: %s withdrawn, but runner job %s could not be cancelled: %s", self.name, job_key,
                        followed.job_id, exc)  # fmt: skip

    async def probe(self) -> bool:
        """Whether the runner answers now and may take jobs: any HTTP answer from it counts (a refusal shows on
        the next job), unless its health reports a GPU type other than the one configured."""
        try:
            health = await self._client.health(retry=False, timeout_s=PROBE_TIMEOUT_S)
        except RunnerError as exc:
            return not is_unavailable(exc)
        return self.check_gpu_type(health) is None

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
            self._checked = False  # whatever answers next at this address is checked again
            answer = "no answer" if exc.status == 0 else f"HTTP {exc.status} {exc.code}"
            return RunnerUnavailableError(f"{what}: {answer}", accepted=accepted)
        return RunnerLostError(f"{what}: the runner answered HTTP {exc.status} {exc.code}")

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        # A self-test on another GPU than the boards' would admit a problem on the wrong hardware's word.
        try:
            await self._check()
        except RunnerUnavailableError as exc:
            if self._refusal is not None:
                raise RunnerRefusedError(
                    f"Runner `{self.name}` is refused, so the self-test did not run: {self._refusal}. "
                    "Fix its gpu_type in the runner settings, or point it at the right host."
                ) from exc
            raise RunnerRefusedError(
                f"Runner `{self.name}` is not answering, so the self-test did not run. Try again later, "
                "or check the runner with `/mod runners`."
            ) from exc
        except RunnerLostError as exc:
            raise RunnerRefusedError(
                f"Runner `{self.name}` could not run the self-test: {exc}. Try again later."
            ) from exc
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


class FleetMember(Protocol):
    """What the store knows of a runner that joined the fleet (`core.store.fleet.LiveRunner`)."""

    @property
    def name(self) -> str: ...
    @property
    def gpu_type(self) -> str: ...
    @property
    def slots(self) -> int: ...
    @property
    def url(self) -> str: ...
    @property
    def secret(self) -> str: ...


def fleet_runner(
    member: FleetMember,
    session: aiohttp.ClientSession,
    *,
    ca_file: str | None = None,
    allow_plain_http: bool = False,
) -> RemoteRunner:
    """The client of a runner that joined the fleet: what it is sent is signed with its own secret."""
    client = RunnerClient(
        member.url, member.secret.encode(), session=session, ca_file=ca_file, allow_plain_http=allow_plain_http
    )
    return RemoteRunner(member.name, member.gpu_type, member.slots, client)
