"""The runner-client interface: what the core needs of a runner, whatever carries the job there.

The core (`core/`) sees runners only through this module and the wire models of `contract.wire`. The backends that
implement it live together in `runner/clients/`: `local` runs jobs in sandboxed workers on this machine,
`remote` reaches a runner daemon over its signed HTTP API. A front end (the bot, the CLI, a bench) builds the
backends it wants and hands them to the core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from contract.wire import JobEvent, JobRequest, SubmissionResult, ValidateReport, ValidateRequest

EventCallback = Callable[[JobEvent], Awaitable[None] | None]


class JobRunner(Protocol):
    """One runner host: evaluates jobs for one GPU type, `slots` at a time."""

    @property
    def name(self) -> str: ...

    @property
    def gpu_type(self) -> str: ...

    @property
    def slots(self) -> int: ...

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        """Start the job and wait for its result. Idempotent on `job_key`: a repeated call follows the job
        already running instead of starting a second. Raises RunnerLostError when the runner cannot finish it."""
        ...

    async def attach(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        """Follow a job started earlier (before the dispatcher restarted, or before the runner stopped answering)
        to its result, with the events not yet delivered. Returns None when this runner does not hold the job,
        so that it is requeued. Both calls raise RunnerUnavailableError when the runner does not answer.

        A runner may also define `async probe() -> bool`, whether it answers now. One without it is handed the
        next job `runner_probe_s` after it stopped answering, and that job is the probe. And `async abandon(job_key)`,
        which stops a job whose submission was withdrawn; one without it runs such a job to its end, unheard."""
        ...


class ProblemValidator(Protocol):
    """A runner that can run the admission self-test of a problem module."""

    @property
    def name(self) -> str: ...

    @property
    def gpu_type(self) -> str: ...

    async def validate(self, request: ValidateRequest) -> ValidateReport: ...
