"""Canaries in the fleet, through the core's calls: a runner whose canaries drift twice from its pool's is
quarantined (no ranked job), its ranked results since its last good canary are flagged and can be re-run, a
single drift only asks for a second measurement, and a good canary lifts the quarantine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg

from api.pool_check import pool_mismatch
from contract.wire import CanaryReport, CanaryTiming, GpuHardware, RunnerHardware, RunnerJoinRequest, RunnerRegistration
from core import fleet
from core.fleet import FleetSettings
from core.fleet.canary import record_canary
from core.moderation import Actor, rerun_submission
from core.settings import RateLimitSettings
from core.store import fleet as fleet_store
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import add_problems, request, submit_scored

ROOMY = RateLimitSettings(test_burst=1000, benchmark_burst=1000, ranked_burst=1000, profile_burst=1000)


# A GPU the registry has no entry for, so no reference table: its pools judge by their runners alone.
A100 = "NVIDIA A100-SXM4-80GB"
A100_POOL = "a100-sxm4-80gb"


def report(scale: float, gpu_type: str = "h100") -> CanaryReport:
    # Near the H100 reference table (core/canary.py), so a pool of one judged against it finds it healthy at 1.0.
    timings = [
        CanaryTiming(name="matmul_fp16_4096", median_us=185.0 * scale, rse=0.003, samples=50),
        CanaryTiming(name="matmul_fp32_2048", median_us=344.0 * scale, rse=0.003, samples=50),
    ]
    return CanaryReport(device="gpu", gpu_type=gpu_type, set_version=1, timings=timings, measured_at=datetime.now(UTC))


async def member(pool: asyncpg.Pool, name: str, gpu: str = "NVIDIA H100 80GB HBM3", gpu_type: str = "h100") -> int:
    made = await fleet.create_join_token(pool, gpu_type, lifetime=timedelta(hours=1))
    joined = await fleet.join(pool, RunnerJoinRequest(token=made.token, name=name), FleetSettings())
    device = GpuHardware(index=0, name=gpu, uuid=f"GPU-{name}", gpu_type=gpu_type)
    hardware = RunnerHardware(device="gpu", gpu_type=gpu_type, gpus=[device], slots=1, sandbox="full")
    await fleet.register(pool, joined.runner_id, RunnerRegistration(url="http://h:1", hardware=hardware), pool_mismatch)
    return joined.runner_id


async def test_a_runner_whose_canaries_drift_twice_is_quarantined_and_its_ranked_results_flagged(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool)
    healthy = [await member(pool, f"box-{i}") for i in range(2)]
    for runner_id in healthy:
        assert not (await record_canary(pool, runner_id, report(1.0))).quarantined
    slow = await member(pool, "test-runner")  # store_helpers.finish records its results as timed on test-runner
    ranked = await submit_scored(pool, "alice", 123.0, mode="ranked", gpu="h100")

    first = await record_canary(pool, slow, report(1.4))
    assert not first.quarantined
    assert await fleet_store.last_verdicts(pool, slow, 1) == ["needs_confirmation"]
    second = await record_canary(pool, slow, report(1.4))
    assert second.quarantined and "matmul_fp16_4096 40 % slower" in (second.note or "")
    assert await fleet_store.flagged_submissions(pool, "test-runner") == [ranked.submission_id]

    # A quarantined runner is never handed a ranked job, and still gets the others.
    await submit(pool, request("bob", mode="ranked", gpu="h100"), ROOMY)
    assert await jobs.claim_next(pool, "h100", "tests", 30.0, "test-runner", ranked=False) is None
    practice = await submit(pool, request("bob", mode="test", gpu="h100"), ROOMY)
    lease = await jobs.claim_next(pool, "h100", "tests", 30.0, "test-runner", ranked=False)
    assert lease is not None and lease.job_id == practice.job_id

    # The flagged result is re-run by a moderator; a good canary lifts the quarantine.
    await rerun_submission(pool, Actor("discord:1", "mod"), ranked.submission_id, "canaries drifted")
    await fleet_store.clear_flag(pool, ranked.submission_id)
    assert await fleet_store.flagged_submissions(pool) == []
    assert not (await record_canary(pool, slow, report(1.02))).quarantined


async def test_one_drifted_measurement_between_good_ones_never_quarantines(pool: asyncpg.Pool) -> None:
    runners = [await member(pool, f"box-{i}") for i in range(3)]
    for runner_id in runners:
        await record_canary(pool, runner_id, report(1.0))
    assert not (await record_canary(pool, runners[2], report(1.5))).quarantined
    assert not (await record_canary(pool, runners[2], report(1.05))).quarantined
    assert not (await record_canary(pool, runners[2], report(1.5))).quarantined


async def test_without_peers_or_a_reference_table_a_canary_has_no_baseline_and_accuses_nobody(
    pool: asyncpg.Pool,
) -> None:
    alone = await member(pool, "box-0", A100, A100_POOL)
    for _ in range(3):
        assert not (await record_canary(pool, alone, report(3.0, A100_POOL))).quarantined
    assert await fleet_store.last_verdicts(pool, alone, 1) == ["no_baseline"]


async def test_a_lone_runner_far_from_its_gpus_reference_table_is_quarantined_on_confirmation(
    pool: asyncpg.Pool,
) -> None:
    alone = await member(pool, "box-0")
    assert (await record_canary(pool, alone, report(1.0))).canary == "ok"
    assert (await record_canary(pool, alone, report(1.6))).canary == "needs_confirmation"
    assert (await record_canary(pool, alone, report(1.6))).quarantined


async def test_the_answer_to_a_report_says_when_a_second_measurement_is_wanted(pool: asyncpg.Pool) -> None:
    runners = [await member(pool, f"box-{i}") for i in range(3)]
    for runner_id in runners:
        assert (await record_canary(pool, runner_id, report(1.0))).canary in ("ok", "no_baseline")
    assert (await record_canary(pool, runners[0], report(1.5))).canary == "needs_confirmation"
    assert (await record_canary(pool, runners[0], report(1.5))).canary == "drifted"
