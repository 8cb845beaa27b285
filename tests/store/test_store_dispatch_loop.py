"""The dispatch loop outlives a fault it did not foresee: a dispatcher that stops leaves every submission queued."""

from __future__ import annotations

import asyncio

import asyncpg

from contract.wire import JobRequest, SubmissionResult
from core.dispatch import Dispatcher, RunnerPool
from core.settings import Settings
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, ScriptedRunner, add_problems, request, result_for, wait_for_state


class FaultyOnce(RunnerPool):
    """Raises an error no handler names the first time the loop asks for GPU types (a bug, say)."""

    faults = 0

    def gpu_types(self) -> list[str]:
        if self.faults == 0:
            self.faults += 1
            raise RuntimeError("a fault nobody planned for")
        return super().gpu_types()


async def test_an_unforeseen_error_in_the_loop_is_logged_and_dispatching_goes_on(
    pool: asyncpg.Pool, settings: Settings
):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)

    async def scores(_key: str, req: JobRequest) -> SubmissionResult:
        return result_for(req, 2.0)

    runners = FaultyOnce([ScriptedRunner("box", scores)])
    task = asyncio.create_task(Dispatcher(pool, runners, settings.dispatch).run())
    try:
        assert await wait_for_state(pool, receipt.job_id, set(jobs.FINAL_STATES)) == "done"
        assert runners.faults == 1 and not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
