"""Real jobs on the local worker: the CLI's path end to end, and crash recovery that finishes a job exactly once.

These run `runner.job.run.run_job` (a worker subprocess that imports torch), so each takes a few seconds.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import asyncpg

from contract.wire import JobEvent, MeasureConfig
from core.dispatch import Dispatcher, RunnerPool
from core.leaderboard import get_leaderboard
from core.settings import Settings
from core.store import jobs, submissions
from core.submit.intake import SubmitReceipt, SubmitRequest, submit
from core.submit.local import LocalSubmission, run_local_submission
from core.submit.uploads import check_upload
from runner.clients.local import LocalRunner
from tests.store.store_helpers import ROOMY, VECTOR_ADD, add_problems, cancel_and_wait, submission, wait_for_state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = MeasureConfig(target_cv=0.5, min_samples=3, max_samples=30, max_seconds=0.5)
FINAL = set(jobs.FINAL_STATES)
# Correct, but slow enough (three test cases, 0.7 s each) to be interrupted mid-job.
SLOW_SOLUTION = b"""import time
import torch


def solution(input_a, input_b, output_c, n):
    time.sleep(0.7)
    torch.add(input_a, input_b, out=output_c)
"""

# A dispatcher in its own process, to be killed with SIGKILL: nothing in it gets to clean up.
DISPATCHER_PROCESS = """
import asyncio, sys
from core.dispatch import Dispatcher, RunnerPool
from runner.clients.local import LocalRunner
from core.store.pool import create_pool
from core.settings import DispatchSettings

async def main(dsn):
    async with create_pool(dsn, min_size=1, max_size=4) as pool:
        settings = DispatchSettings(owner="crashing", lease_s=30, retry_backoff_s=0, poll_s=0.1)
        await Dispatcher(pool, RunnerPool([LocalRunner(gpu_type="cpu")]), settings).run()

asyncio.run(main(sys.argv[1]))
"""


async def slow_submission(pool: asyncpg.Pool) -> SubmitReceipt:
    await add_problems(pool)
    slow = SubmitRequest(
        "discord:alice", "alice", "vector_add", check_upload("slow.py", SLOW_SOLUTION), "cpu", mode="test"
    )
    return await submit(pool, slow, ROOMY)


async def assert_finished_once(pool: asyncpg.Pool, receipt: SubmitReceipt, attempts: int) -> None:
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and (job.state, job.attempts) == ("done", attempts)
    done = [t for t in await jobs.transitions(pool, receipt.job_id) if t.to_state == "done"]
    assert len(done) == 1
    stored = await submission(pool, receipt.submission_id)
    assert (stored.status, stored.result_job_id) == ("passed", receipt.job_id)
    cases = await submissions.case_results(pool, receipt.job_id)
    assert [(c.kind, c.idx, c.passed) for c in cases] == [("test", i, True) for i in range(3)]


async def test_submit_and_wait_runs_the_job_locally_and_ranks_it(pool: asyncpg.Pool, settings: Settings):
    from core.problems import ProblemSpec
    from problems.registry import get_problem

    events: list[JobEvent] = []
    local = LocalSubmission(
        problem=ProblemSpec.of(get_problem("vector_add")),
        upload=check_upload("vector_add.py", (EXAMPLES / "vector_add.py").read_bytes()),
        mode="ranked",
    )
    runner = LocalRunner(gpu_type="cpu", measure=FAST)
    submission_id, result = await run_local_submission(pool, settings, local, runner, events.append)
    assert result.status == "passed" and result.score is not None and result.score > 0
    assert events[0].type == "accepted" and events[-1].type == "done"
    stored = await submission(pool, submission_id)
    assert (stored.status, stored.gpu_type, stored.score) == ("passed", "cpu", result.score)
    board = await get_leaderboard(pool, "vector_add", "cpu")
    assert [(r.rank, r.display_name, r.submission_id) for r in board.rows] == [(1, "tester", submission_id)]
    cases = await submissions.case_results(pool, stored.result_job_id)  # type: ignore[arg-type]
    assert {c.kind for c in cases} == {"test", "benchmark"} and len(cases) == len(result.tests) + len(result.timings)


async def test_a_restarted_dispatcher_reattaches_to_the_running_job_and_records_it_once(
    pool: asyncpg.Pool, settings: Settings
):
    receipt = await slow_submission(pool)
    runner = LocalRunner(gpu_type="cpu")  # outlives the dispatcher, as a remote runner would
    try:
        first = asyncio.create_task(Dispatcher(pool, RunnerPool([runner]), settings.dispatch).run())
        await wait_for_state(pool, receipt.job_id, {"running"})
        await cancel_and_wait(first)
        assert (await jobs.get_job(pool, receipt.job_id)).state == "running"  # type: ignore[union-attr]

        restarted = Dispatcher(pool, RunnerPool([runner]), settings.dispatch)
        second = asyncio.create_task(restarted.run())
        try:
            await wait_for_state(pool, receipt.job_id, FINAL)
        finally:
            await cancel_and_wait(second)
    finally:
        await runner.aclose()
    await assert_finished_once(pool, receipt, attempts=1)
    notes = [t.note for t in await jobs.transitions(pool, receipt.job_id)]
    assert "taken over" in notes


async def test_a_killed_dispatcher_process_is_recovered_and_the_job_completes_exactly_once(
    pool: asyncpg.Pool, settings: Settings, db_dsn: str
):
    receipt = await slow_submission(pool)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", DISPATCHER_PROCESS, db_dsn)
    try:
        await wait_for_state(pool, receipt.job_id, {"running"}, timeout_s=180)
    finally:
        proc.kill()
        await proc.wait()
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and (job.state, job.lease_owner) == ("running", "crashing")

    # The same dispatcher starts again; its runner died with it, so the job is requeued and run afresh.
    runner = LocalRunner(gpu_type="cpu")
    restarted = settings.dispatch.model_copy(update={"owner": "crashing"})
    task = asyncio.create_task(Dispatcher(pool, RunnerPool([runner]), restarted).run())
    try:
        await wait_for_state(pool, receipt.job_id, FINAL, timeout_s=180)
    finally:
        try:
            await cancel_and_wait(task)
        finally:
            await runner.aclose()
    await assert_finished_once(pool, receipt, attempts=2)
    moves = [(t.from_state, t.to_state) for t in await jobs.transitions(pool, receipt.job_id)]
    assert moves == [
        ("queued", "dispatched"),
        ("dispatched", "running"),
        ("running", "running"),
        ("running", "queued"),
        ("queued", "dispatched"),
        ("dispatched", "running"),
        ("running", "done"),
    ]


def test_the_vector_add_spec_used_here_matches_the_built_in_problem():
    from problems.registry import canonical_slug, get_problem

    # The spec keeps the former slug on purpose: jobs stored under it still reach the renamed problem.
    problem = get_problem(VECTOR_ADD.slug)
    assert (problem.slug, problem.version) == (canonical_slug(VECTOR_ADD.slug), VECTOR_ADD.version)
    assert problem.slug == "vector-addition"
