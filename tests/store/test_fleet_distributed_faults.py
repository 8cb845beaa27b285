"""A distributed job whose rank is killed mid-job, against real processes: `arena api` dispatching to a runner
daemon with a slot of 2 ranks (RUNNER_RANK_SLOTS), on a real PostgreSQL.

Rank 1 of an honest all-gather sleeps inside its call while rank 0 waits for it in the collective; the test finds
rank 1's process under the daemon's process tree (its command line, `runner.distributed.rank JOB 1`, in /proc) and
SIGKILLs it. What the service promises then: the kill is its fault, not the submission's. Rank 0's error (gloo's
"Connection closed by peer", raised inside the submission's collective) is not blamed on the code; the runner
answers `host_busy`, no verdict (runner/job/distributed.py), so the dispatcher runs the job again, and the second
attempt's result is the one stored, once. On the last attempt the job ends as the service's error instead, and the
user's rate-limit token goes back. Nothing here asserts a duration: every wait polls up to a generous deadline.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator

import asyncpg
import pytest

from core.problems import ProblemSpec, sync_problem
from core.store import jobs, submissions
from core.submit.intake import SubmitReceipt, SubmitRequest, submit
from core.submit.uploads import check_upload
from problems.distributed.registry import get_distributed_problem
from tests.store.fleet_processes import (
    FINAL,
    RATES,
    Fleet,
    Proc,
    assert_ended_once,
    available_tokens,
    fleet_on,
    runner_metrics,
    wait_final,
    wait_live,
    wait_state,
    wait_until,
)

pytestmark = pytest.mark.timeout(600)

# What rank 1 names its thread once it is inside its call: the host reads it in /proc/PID/comm (15 bytes at most).
IN_THE_CALL = "rank-in-call"
# An honest all-gather whose rank 1 sleeps 3 s inside each of its three calls (mode `test`: one call per case):
# long enough to be killed there, short enough that the attempt that is not killed passes soon after.
SLOW_RANK = f"""import time

import torch.distributed as dist


def solution(d_input, d_output, n, rank, world_size, group):
    if rank == 1:
        with open("/proc/self/comm", "w") as comm:
            comm.write({IN_THE_CALL!r})
        time.sleep(3.0)
    dist.all_gather_into_tensor(d_output, d_input, group=group)
""".encode()
TEST_CASES = len(get_distributed_problem("all-gather").cpu_cases)
HOST_BUSY = 'arena_runner_job_errors_total{code="host_busy"}'


@pytest.fixture
async def fleet(db_dsn: str) -> AsyncIterator[Fleet]:
    async with fleet_on(db_dsn) as made:
        yield made


async def _start(pool: asyncpg.Pool, fleet_: Fleet, **api_env: str) -> Proc:
    """The API service (dispatching) and one CPU runner, `ranks`, whose only rank slot has 2 ranks; all-gather
    registered as the bot registers it."""
    problem = get_distributed_problem("all-gather")
    await sync_problem(
        pool, ProblemSpec(problem.slug, problem.title, problem.version, tuple(problem.dtypes), problem.score_metric)
    )
    fleet_.api(**api_env).start()
    await fleet_.wait_api()
    runner = fleet_.runner("ranks", await fleet_.token(pool, "cpu"), RUNNER_RANK_SLOTS="[2]")
    runner.start()
    await wait_live(pool, fleet_, {"ranks"})
    return runner


async def _submit(pool: asyncpg.Pool) -> SubmitReceipt:
    upload = check_upload("all_gather_slow_rank.py", SLOW_RANK)
    request = SubmitRequest("discord:alice", "alice", "all-gather", upload, "cpux2", mode="test", world_size=2)
    return await submit(pool, request, RATES)


def _descendants(root: int) -> list[int]:
    """Every process below `root`, from one pass over /proc (the ranks sit several levels down, below the
    sandbox's `unshare`, its init and the harness)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat[stat.rindex(b")") + 2 :].split(None, 2)[1])
        children.setdefault(ppid, []).append(int(name))
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, ())
    return found


def _rank_in_its_call(daemon: int, rank: int) -> int | None:
    """The pid of the daemon's rank process `rank` (`python -m runner.distributed.rank JOB RANK`), once the
    submission's call runs in it."""
    for pid in _descendants(daemon):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")[:-1]
            with open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
                comm = fh.read().strip()
        except OSError:
            continue
        if b"runner.distributed.rank" in argv and argv[-1] == str(rank).encode() and comm == IN_THE_CALL:
            return pid
    return None


async def _kill_rank_mid_job(pool: asyncpg.Pool, fleet_: Fleet, runner: Proc, receipt: SubmitReceipt) -> None:
    """SIGKILL to rank 1 while it is inside its call, on the job's first attempt."""
    await wait_state(pool, receipt.job_id, {"running"}, fleet_)
    assert runner.process is not None
    found: list[int] = []

    async def in_its_call() -> bool:
        pid = _rank_in_its_call(runner.process.pid, 1)  # type: ignore[union-attr]
        if pid is not None:
            found.append(pid)
        return pid is not None

    await wait_until(in_its_call, 180, "rank 1 never ran its call", fleet_.logs)
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and (job.state, job.attempts) == ("running", 1), job
    os.kill(found[0], signal.SIGKILL)


async def test_a_rank_killed_mid_job_is_the_services_fault_and_its_job_runs_again_once(
    pool: asyncpg.Pool, fleet: Fleet
) -> None:
    runner = await _start(pool, fleet)
    receipt = await _submit(pool)
    await _kill_rank_mid_job(pool, fleet, runner, receipt)

    job = await wait_final(pool, receipt.job_id, fleet)
    assert (job.state, job.attempts, job.runner) == ("done", 2, "ranks/x2"), fleet.logs()
    # The first attempt's answer was no verdict: the runner said host_busy, and the job went back to the queue.
    assert (await runner_metrics(pool, "ranks")).get(HOST_BUSY) == 1, fleet.logs()
    moves = await jobs.transitions(pool, receipt.job_id)
    assert [m.attempt for m in moves if m.to_state == "queued" and m.from_state is not None] == [1], moves
    # One submission, one job, one final outcome: the second attempt's pass, its three cases stored once, one
    # token charged (assert_ended_once); nothing of the killed attempt is stored.
    assert TEST_CASES == 3
    await assert_ended_once(pool, [receipt])
    assert await pool.fetchval("SELECT count(*) FROM submissions") == 1
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None and (sub.status, sub.error_code, sub.world_size) == ("passed", None, 2), sub


async def test_a_rank_killed_on_the_last_attempt_ends_the_job_as_the_services_error(
    pool: asyncpg.Pool, fleet: Fleet
) -> None:
    """With no attempt left, the kill ends the job once, as the service's error: no verdict on the code (not
    `runtime_error`, not `wrong_answer`), no case stored, and the user's rate-limit token given back."""
    runner = await _start(pool, fleet, ARENA_DISPATCH_MAX_ATTEMPTS="1")
    receipt = await _submit(pool)
    assert await available_tokens(pool, receipt.user_id) == pytest.approx(RATES.test_burst - 1, abs=0.5)
    await _kill_rank_mid_job(pool, fleet, runner, receipt)

    job = await wait_final(pool, receipt.job_id, fleet)
    assert (job.state, job.attempts) == ("error", 1), fleet.logs()
    moves = await jobs.transitions(pool, receipt.job_id)
    assert [m.to_state for m in moves if m.to_state in FINAL] == ["error"], moves
    assert [j.id for j in await jobs.jobs_of(pool, receipt.submission_id)] == [receipt.job_id]
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None and (sub.status, sub.error_code) == ("error", "host_busy"), sub
    assert (sub.error_message or "").startswith("Rank 1 of this run was killed (SIGKILL) from outside"), sub
    assert await submissions.case_results(pool, receipt.job_id) == []
    assert await available_tokens(pool, receipt.user_id) == pytest.approx(RATES.test_burst, abs=0.5)
