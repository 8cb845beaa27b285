"""A runner whose host was too busy to check a job's timing answers `host_busy`: no verdict, so the job runs
again, and only a job that never gets a quiet host ends in `error` (the system's fault, never the user's)."""

from __future__ import annotations

import asyncpg

from contract.wire import ErrorInfo, JobRequest, SubmissionResult
from core.dispatch import Dispatcher, RunnerPool
from core.settings import Settings
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import (
    ROOMY,
    ScriptedRunner,
    add_problems,
    request,
    result_for,
    submission,
    wait_for_state,
)
from tests.store.test_store_dispatch import running

FINAL = set(jobs.FINAL_STATES)


def _busy(req: JobRequest) -> SubmissionResult:
    busy = ErrorInfo(code="host_busy", message="The runner's host was too busy to check the timing. Run it again.")
    return result_for(req, None, status="error").model_copy(update={"status": "error", "error": busy})


async def test_a_host_busy_answer_runs_the_job_again(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    answers: list[str] = []

    async def busy_once(key: str, req: JobRequest) -> SubmissionResult:
        answers.append(key)
        return _busy(req) if len(answers) == 1 else result_for(req, 9.0)

    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", busy_once)]), settings.dispatch)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
    assert len(answers) == 2
    stored = await submission(pool, receipt.submission_id)
    assert stored.status == "passed" and stored.score == 9.0


async def test_a_host_that_stays_busy_ends_the_job_as_the_systems_error(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipt = await submit(pool, request("bob"), ROOMY)

    async def always_busy(_key: str, req: JobRequest) -> SubmissionResult:
        return _busy(req)

    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", always_busy)]), settings.dispatch)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "error"
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == settings.dispatch.max_attempts
