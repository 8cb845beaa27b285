"""What a solution printed is stored with its result and read back as the runner reported it, per phase, with
the counts of bytes cut; a NUL it printed, which PostgreSQL's jsonb refuses, cannot cost the job its result."""

from __future__ import annotations

import asyncpg

from contract.wire import PhaseOutput, SubmissionResult
from core.browse import submission_detail
from core.results import load_result, record_result
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request, submission


def _result(submission_id: int, output: list[PhaseOutput]) -> SubmissionResult:
    return SubmissionResult(
        submission_id=str(submission_id),
        problem_slug="vector_add",
        problem_version=1,
        dtype="float32",
        language="python",
        mode="ranked",
        status="passed",
        device="cpu",
        notes=["The solution printed during its timed calls: printing is part of the measured time."],
        output=output,
    )


async def _record(pool: asyncpg.Pool, job_id: int, result: SubmissionResult) -> None:
    lease = await jobs.claim_job(pool, job_id, "test-owner", 30.0, "test-runner")
    assert lease is not None
    assert await record_result(pool, lease, result, "test-runner")


async def test_the_output_of_each_phase_reads_back_as_reported(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    output = [
        PhaseOutput(phase="load", stdout="hello ünïcode ✓\n"),
        PhaseOutput(phase="test", stdout="x" * 8192, stderr="warn\n", stdout_cut_bytes=1_040_384),
        PhaseOutput(phase="benchmark", stderr="slow\n", stderr_cut_bytes=3),
    ]
    reported = _result(receipt.submission_id, output)
    await _record(pool, receipt.job_id, reported)
    sub = await submission(pool, receipt.submission_id)
    assert await load_result(pool, sub) == reported
    detail = await submission_detail(pool, receipt.submission_id, "discord:alice")
    assert detail.result is not None and detail.result.output == output


async def test_a_printed_nul_is_stored_as_a_replacement_character(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    await _record(pool, receipt.job_id, _result(receipt.submission_id, [PhaseOutput(phase="test", stdout="a\x00b")]))
    stored = await load_result(pool, await submission(pool, receipt.submission_id))
    assert stored.status == "passed"
    assert [o.stdout for o in stored.output] == ["a\ufffdb"]


async def test_a_run_that_printed_nothing_reads_back_with_no_output(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    await _record(pool, receipt.job_id, _result(receipt.submission_id, []))
    assert (await load_result(pool, await submission(pool, receipt.submission_id))).output == []
