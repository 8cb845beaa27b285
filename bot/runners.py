"""The runners the bot dispatches to, built from settings: remote daemons by URL and secret, and a local one.

`RunnerSet` owns them (and closes the local runner's workers on shutdown); `statuses()` answers `/mod
runners` with each runner's health, and with the reason a remote runner is refused: its health reports another
GPU type than the one configured (`RemoteRunner` keeps such a runner from every job until they agree).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import aiohttp

from bot.bot_settings import BotSettings
from core.errors import UserFacingError
from runner.api import HealthInfo
from runner.client import JobRunner, ProblemValidator
from runner.clients.http import RunnerClient, RunnerError
from runner.clients.local import LocalRunner, LocalValidator, detect_gpu_type
from runner.clients.remote import RemoteRunner
from runner.gpus import model_for

log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class RunnerStatus:
    name: str
    gpu_type: str
    kind: str
    slots: int
    health: HealthInfo | None
    error: str | None
    refused: str | None = None  # why no job goes to it: the GPU type it reports is not the configured one


def _health_error(exc: RunnerError | TimeoutError) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {HEALTH_TIMEOUT_S:g} s"
    if exc.status == 0:
        return "no answer"
    if exc.code == "http_error":
        return f"HTTP {exc.status}"
    return f"HTTP {exc.status} {exc.code}: {exc.message}"


@dataclass
class RunnerSet:
    remote: list[RemoteRunner] = field(default_factory=list)
    local: LocalRunner | None = None
    local_validator: LocalValidator | None = None

    @property
    def runners(self) -> list[JobRunner]:
        found: list[JobRunner] = list(self.remote)
        if self.local is not None:
            found.append(self.local)
        return found

    def validator(self, gpu_type: str | None = None) -> ProblemValidator:
        """A runner for an admission self-test: of `gpu_type` when given, else the first one configured."""
        candidates: list[ProblemValidator] = list(self.remote)
        if self.local_validator is not None:
            candidates.append(self.local_validator)
        for candidate in candidates:
            if gpu_type is None or candidate.gpu_type == gpu_type:
                return candidate
        offered = ", ".join(sorted({c.gpu_type for c in candidates})) or "none"
        raise UserFacingError(f"No runner of GPU type `{gpu_type}` can run the self-test; choose one of {offered}.")

    async def statuses(self) -> list[RunnerStatus]:
        return list(await asyncio.gather(*(self._status(r) for r in self.runners)))

    async def _status(self, runner: JobRunner) -> RunnerStatus:
        if not isinstance(runner, RemoteRunner):
            return RunnerStatus(runner.name, runner.gpu_type, "local", runner.slots, None, None)
        try:
            health = await asyncio.wait_for(runner.health(), HEALTH_TIMEOUT_S)
        except (RunnerError, TimeoutError) as exc:
            # Moderators read this in Discord: the cause, never the runner's address (that goes to the log).
            log.warning("runner %s (%s): health check failed: %r", runner.name, runner.url, exc)
            return RunnerStatus(runner.name, runner.gpu_type, "remote", runner.slots, None, _health_error(exc))
        refused = runner.check_gpu_type(health)
        return RunnerStatus(runner.name, runner.gpu_type, "remote", runner.slots, health, None, refused)

    async def aclose(self) -> None:
        if self.local is not None:
            await self.local.aclose()


def _explain_gpu_type(runner: str, gpu_type: str) -> None:
    """Say at start what the registry makes of a configured GPU type: its jobs and boards go by the spelling
    configured, so an old spelling or a model without an entry is worth a line in the log."""
    model = model_for(gpu_type)
    if model is None:
        log.info("runner %s: GPU type `%s` has no entry in runner/gpus.py: no datasheet peaks", runner, gpu_type)
    elif gpu_type != model.key:
        log.warning(
            "runner %s: `%s` is an old spelling of GPU type `%s`; its jobs go to the `%s` boards, not to `%s`",
            runner,
            gpu_type,
            model.key,
            gpu_type,
            model.key,
        )


async def build_runners(settings: BotSettings, session: aiohttp.ClientSession) -> RunnerSet:
    """Remote runners from `settings.runners`, plus a local one when `settings.local_runner` asks for it."""
    built = RunnerSet()
    for config in settings.runners:
        client = RunnerClient(
            config.url,
            settings.runner_secret_for(config),
            session=session,
            ca_file=config.ca_file,
            allow_plain_http=config.allow_plain_http,
        )
        built.remote.append(RemoteRunner(config.name, config.gpu_type, config.slots, client))
        log.info("runner %s: %s serves %s with %d slot(s)", config.name, config.url, config.gpu_type, config.slots)
        _explain_gpu_type(config.name, config.gpu_type)
    if settings.wants_local_runner():
        gpu_type = await asyncio.to_thread(detect_gpu_type, settings.local_device)
        built.local = LocalRunner(gpu_type=gpu_type, slots=settings.local_slots, measure=settings.local_measure)
        built.local_validator = LocalValidator(gpu_type)
        log.info("local runner serves %s with %d slot(s)", gpu_type, settings.local_slots)
    if not built.runners:
        log.warning("no runner is configured: submissions will wait in the queue")
    return built
