"""A GPU slot sends a job's result before tearing the job down, and the slot's next job waits for that teardown
before its processes go on. Real sandbox, real workers (on the CPU: `run_job` treats the order the same way)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Coroutine
from pathlib import Path

from runner.api import JobEvent
from runner.host.executor import Executor
from runner.host.job import run_job
from tests.runner.conftest import good_request, settings_for


async def test_the_result_goes_out_before_the_teardown_which_then_deletes_the_jobs_files(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    handed: list[Coroutine[None, None, float]] = []
    jobs = executor.jobs_dir
    at_done: list[set[Path]] = []

    def note(event: JobEvent) -> None:
        if event.type == "done":
            at_done.append(set(jobs.iterdir()))

    result = await run_job(good_request(), note, executor=executor, teardown_later=handed.append)
    assert result.status == "passed", result.error
    assert "teardown" not in result.phase_seconds  # it had not happened when the result went out
    (teardown,) = handed
    (present,) = at_done
    assert len(present) >= 2, "the job's two directories still existed when `done` was sent"
    before = time.monotonic()
    seconds = await teardown
    # What it reports is its own duration: within the time spent awaiting it.
    assert 0 <= seconds <= time.monotonic() - before
    assert not present & set(jobs.iterdir()), "the teardown deleted the job's directories"


async def test_the_next_job_goes_on_only_after_the_previous_teardown(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    previous: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    events: list[str] = []
    job = asyncio.create_task(
        run_job(good_request(), lambda e: events.append(e.type), executor=executor, after=previous)
    )
    # Whatever the host's speed, nothing is judged while the previous teardown runs.
    await asyncio.sleep(2.0)
    assert "test_case" not in events and not job.done(), events
    previous.set_result(0.1)
    result = await job
    assert result.status == "passed", result.error
    assert "test_case" in events and "teardown" in result.phase_seconds


async def test_cancelling_a_job_that_waits_leaves_the_previous_teardown_running(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    previous: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    job = asyncio.create_task(run_job(good_request(), executor=executor, after=previous))
    await asyncio.sleep(0.5)
    job.cancel()
    await asyncio.wait({job})
    assert job.cancelled() and not previous.cancelled()
    assert not list(executor.jobs_dir.iterdir()), "the cancelled job's directories were deleted"


async def test_a_previous_teardown_that_failed_does_not_fail_the_next_job(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    previous: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    previous.set_exception(OSError("the previous job's folder could not be deleted"))
    result = await run_job(good_request(), executor=executor, after=previous)
    assert result.status == "passed", result.error
    previous.exception()  # retrieved: the failure was the previous job's to log
