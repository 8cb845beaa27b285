"""A GPU slot sends a job's result before tearing the job down, and the slot's next job waits for that teardown
before its processes go on. Real sandbox, real workers (on the CPU: `run_job` treats the order the same way)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Coroutine, Generator
from pathlib import Path
from typing import Any

from contract.wire import JobEvent
from runner.host.devices import default_slot
from runner.host.executor import Executor, job_env, start_warm_worker
from runner.job.run import run_job
from tests.runner.conftest import good_request, settings_for


class HeldTeardown:
    """The slot's previous teardown, held until the test releases it. It notes when a job starts waiting for it,
    which is how the tests know, on a machine of any speed, that the job has reached its wait."""

    def __init__(self) -> None:
        self.awaited = asyncio.Event()
        self.ended: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    def release(self, seconds: float) -> None:
        self.ended.set_result(seconds)

    def __await__(self) -> Generator[Any, None, float]:
        self.awaited.set()
        return (yield from self.ended.__await__())


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
    """Event-based, so that it holds on any machine: the previous teardown is held until the test releases it,
    and what is checked is the order of things, never how long anything took. A job that does not wait ends
    (or lets its processes through their gate) before it ever awaits the held teardown, and fails here."""
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    request = good_request()
    slot = await asyncio.to_thread(default_slot)
    # The job's processes, started here so that the test can see whether their gate was opened.
    warm = await start_warm_worker(executor, slot, job_env(slot, request))
    assert warm.fits(slot, request)
    previous = HeldTeardown()
    events: list[str] = []
    job = asyncio.create_task(
        run_job(request, lambda e: events.append(e.type), executor=executor, slot=slot, warm=warm, after=previous)
    )
    awaited = asyncio.create_task(previous.awaited.wait())
    await asyncio.wait({job, awaited}, return_when=asyncio.FIRST_COMPLETED)
    awaited.cancel()
    assert previous.awaited.is_set() and not job.done(), f"the job went on without the previous teardown: {events}"
    # Nothing of the job has reached its processes: the job itself blocks the gate's first step (`go`).
    assert warm.go_fd >= 0, "the job's processes were let through their gate before the previous teardown ended"
    assert events == ["accepted"], events
    events.append("released")
    previous.release(0.1)
    result = await job
    assert result.status == "passed", result.error
    assert "test_case" in events and events.index("test_case") > events.index("released"), events
    assert "teardown" in result.phase_seconds


async def test_cancelling_a_job_that_waits_leaves_the_previous_teardown_running(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    previous = HeldTeardown()
    job = asyncio.create_task(run_job(good_request(), executor=executor, after=previous))
    awaited = asyncio.create_task(previous.awaited.wait())
    await asyncio.wait({job, awaited}, return_when=asyncio.FIRST_COMPLETED)
    awaited.cancel()
    assert previous.awaited.is_set() and not job.done(), "the job went on without the previous teardown"
    job.cancel()
    await asyncio.wait({job})
    assert job.cancelled() and not previous.ended.done(), "cancelling the job cancelled the previous teardown"
    assert not list(executor.jobs_dir.iterdir()), "the cancelled job's directories were deleted"
    previous.release(0.1)


async def test_a_previous_teardown_that_failed_does_not_fail_the_next_job(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    previous: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    previous.set_exception(OSError("the previous job's folder could not be deleted"))
    result = await run_job(good_request(), executor=executor, after=previous)
    assert result.status == "passed", result.error
    previous.exception()  # retrieved: the failure was the previous job's to log
