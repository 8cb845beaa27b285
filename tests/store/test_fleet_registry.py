"""The fleet's registry in the store, through the core's calls (no process): tokens, joins, the pool check,
heartbeats and leaving, replay fences, and the web's read-only role kept away from runners' secrets."""

from __future__ import annotations

import functools
import time
from datetime import timedelta

import asyncpg
import pytest

from api.pool_check import pool_mismatch
from contract.wire import GpuHardware, RunnerHardware, RunnerHeartbeat, RunnerJoinRequest, RunnerRegistration
from core import fleet
from core.fleet import FleetAuthError, FleetSettings, JoinRefusedError, PoolMismatchError, RunnerGoneError
from core.results import requeue_or_fail
from core.settings import StoreSettings
from core.store import fleet as fleet_store
from core.store import jobs, ratelimits
from core.store.pool import open_reader_store
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request

SETTINGS = FleetSettings(heartbeat_s=1.0, heartbeat_timeout_s=5.0)


def h100_sxm(index: int = 0) -> GpuHardware:
    return GpuHardware(index=index, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{index}", gpu_type="h100")


def hardware(*gpus: GpuHardware) -> RunnerHardware:
    return RunnerHardware(device="gpu", gpu_type=gpus[0].gpu_type, gpus=list(gpus), slots=len(gpus), sandbox="full")


async def joined(pool: asyncpg.Pool, name: str = "box-1", gpu_type: str = "h100") -> int:
    made = await fleet.create_join_token(pool, gpu_type, lifetime=timedelta(hours=1))
    answer = await fleet.join(pool, RunnerJoinRequest(token=made.token, name=name), SETTINGS)
    assert answer.gpu_type == gpu_type and len(answer.secret) >= 32
    return answer.runner_id


async def test_an_unknown_expired_or_revoked_token_cannot_join(pool: asyncpg.Pool) -> None:
    with pytest.raises(JoinRefusedError, match="unknown, expired or revoked"):
        await fleet.join(pool, RunnerJoinRequest(token="arena-join-" + "x" * 40, name="box"), SETTINGS)
    expired = await fleet.create_join_token(pool, "h100", lifetime=timedelta(seconds=-1))
    with pytest.raises(JoinRefusedError):
        await fleet.join(pool, RunnerJoinRequest(token=expired.token, name="box"), SETTINGS)
    revoked = await fleet.create_join_token(pool, "h100", lifetime=timedelta(hours=1))
    assert await fleet_store.revoke_join_token(pool, revoked.row.id)
    with pytest.raises(JoinRefusedError):
        await fleet.join(pool, RunnerJoinRequest(token=revoked.token, name="box"), SETTINGS)
    # Only the token's hash is stored.
    assert (
        await pool.fetchval("SELECT count(*) FROM runner_join_tokens WHERE token_sha256 = $1", revoked.token.encode())
        == 0
    )


@pytest.mark.parametrize(
    ("gpu", "reason"),
    [
        (
            GpuHardware(index=0, name="NVIDIA H100 PCIe", uuid="GPU-p", gpu_type="h100"),
            "NVIDIA H100 PCIe (`h100-pcie`)",
        ),
        (GpuHardware(index=0, name="NVIDIA H200", uuid="GPU-h", gpu_type="h100"), "NVIDIA H200 (`h200`)"),
    ],
)
async def test_a_gpu_that_is_not_the_pools_is_refused_whatever_key_the_runner_claims(
    pool: asyncpg.Pool, gpu: GpuHardware, reason: str
) -> None:
    runner_id = await joined(pool)
    registration = RunnerRegistration(url="http://10.0.0.7:8700", hardware=hardware(gpu))
    with pytest.raises(PoolMismatchError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        await fleet.register(pool, runner_id, registration, pool_mismatch)
    row = await fleet_store.get_runner(pool, runner_id)
    assert row is not None and row.state == "refused" and reason in (row.note or "")
    assert await fleet_store.live_runners(pool, 60) == []
    # Refused for good: registering again does not let it in.
    ok = RunnerRegistration(url="http://10.0.0.7:8700", hardware=hardware(h100_sxm()))
    with pytest.raises(RunnerGoneError):
        await fleet.register(pool, runner_id, ok, pool_mismatch)


@pytest.mark.parametrize("level", ["none", "network"])
async def test_a_runner_whose_sandbox_is_weaker_than_the_fleet_requires_joins_no_pool(
    pool: asyncpg.Pool, level: str
) -> None:
    """A hand-made registration of a real H100 that reports `sandbox: none` (or `network`) is refused by the
    default requirement, `full`; a fleet that sets its requirement that low lets the same hardware in."""
    weak = hardware(h100_sxm()).model_copy(update={"sandbox": level})
    runner_id = await joined(pool, "weak-box")
    with pytest.raises(PoolMismatchError, match=f"its sandbox is `{level}`, and this fleet requires `full`"):
        await fleet.register(
            pool, runner_id, RunnerRegistration(url="http://10.0.0.7:8700", hardware=weak), pool_mismatch
        )
    assert await fleet_store.live_runners(pool, 60) == []
    trusting = functools.partial(pool_mismatch, required_sandbox=level)
    other_id = await joined(pool, "weak-box-2")
    await fleet.register(pool, other_id, RunnerRegistration(url="http://10.0.0.8:8700", hardware=weak), trusting)
    assert [r.name for r in await fleet_store.live_runners(pool, 60)] == ["weak-box-2"]


async def test_a_registered_runner_is_live_until_its_heartbeats_stop(pool: asyncpg.Pool) -> None:
    runner_id = await joined(pool)
    registration = RunnerRegistration(url="http://10.0.0.7:8700", hardware=hardware(h100_sxm(0), h100_sxm(1)))
    standing = await fleet.register(pool, runner_id, registration, pool_mismatch)
    assert standing.state == "active"
    [live] = await fleet_store.live_runners(pool, 60)
    assert (live.name, live.url, live.slots, live.gpu_type) == ("box-1", "http://10.0.0.7:8700", 2, "h100")
    assert (await fleet.heartbeat(pool, runner_id, RunnerHeartbeat(state="draining"))).state == "draining"
    await pool.execute("UPDATE runners SET last_seen_at = now() - interval '1 minute' WHERE id = $1", runner_id)
    [left] = await fleet.sweep_silent(pool, SETTINGS)
    assert left.id == runner_id and left.state == "left"
    with pytest.raises(RunnerGoneError, match="join again") as gone:
        await fleet.heartbeat(pool, runner_id, RunnerHeartbeat())
    assert gone.value.state == "left"
    # A runner that left registers again with the same credential (it was cut off, not revoked).
    assert (await fleet.register(pool, runner_id, registration, pool_mismatch)).state == "active"


async def test_joining_again_under_a_name_retires_the_earlier_join(pool: asyncpg.Pool) -> None:
    first = await joined(pool, "box-1")
    second = await joined(pool, "box-1")
    assert first != second
    assert (await fleet_store.get_runner(pool, first)).state == "left"  # type: ignore[union-attr]


async def test_a_revoked_runner_loses_its_credential(pool: asyncpg.Pool) -> None:
    runner_id = await joined(pool)
    await fleet.register(
        pool, runner_id, RunnerRegistration(url="http://h:1", hardware=hardware(h100_sxm())), pool_mismatch
    )
    await fleet.revoke(pool, "box-1")
    with pytest.raises(FleetAuthError):
        await fleet.runner_secret(pool, runner_id)
    assert await fleet_store.live_runners(pool, 60) == []


async def test_a_signed_request_is_accepted_once_and_only_if_newer(pool: asyncpg.Pool) -> None:
    runner_id = await joined(pool)
    now = time.time()
    await fleet.accept_request(pool, runner_id, now)
    with pytest.raises(FleetAuthError, match="replay"):
        await fleet.accept_request(pool, runner_id, now)
    with pytest.raises(FleetAuthError):
        await fleet.accept_request(pool, runner_id, now - 1)
    await fleet.accept_request(pool, runner_id, now + 0.001)


async def test_the_webs_read_only_role_cannot_read_runner_secrets(pool: asyncpg.Pool, db_dsn: str) -> None:
    await joined(pool)
    async with open_reader_store(StoreSettings(database_url=db_dsn)) as store:
        assert await store.pool.fetchval("SELECT count(*) FROM runners") == 1
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.pool.fetchval("SELECT secret FROM runner_secrets")


async def test_a_job_the_service_failed_gives_its_rate_limit_token_back(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="test", gpu="h100"), ROOMY)
    before = await ratelimits.peek(pool, receipt.user_id, "test", ROOMY.test_burst, ROOMY.test_per_hour)
    lease = await jobs.claim_next(pool, "h100", "tests", 30.0, "box-1")
    assert lease is not None and lease.job_id == receipt.job_id
    assert await requeue_or_fail(pool, lease, "runner box-1 left its pool", max_attempts=1, backoff_s=0.0) == "failed"
    after = await ratelimits.peek(pool, receipt.user_id, "test", ROOMY.test_burst, ROOMY.test_per_hour)
    assert after == pytest.approx(before + 1, abs=0.01)
    status = await pool.fetchval("SELECT status FROM submissions WHERE id = $1", receipt.submission_id)
    assert status == "error"


async def test_a_result_the_runner_failed_to_judge_gives_the_token_back(pool: asyncpg.Pool) -> None:
    from contract.wire import ErrorInfo
    from core.results import record_result
    from tests.store.store_helpers import result_for

    await add_problems(pool)
    charged = await submit(pool, request("alice", mode="test", gpu="h100"), ROOMY)
    before = await ratelimits.peek(pool, charged.user_id, "test", ROOMY.test_burst, ROOMY.test_per_hour)
    lease = await jobs.claim_next(pool, "h100", "tests", 30.0, "box-1")
    assert lease is not None
    spec = await jobs.job_spec(pool, lease.job_id)
    assert spec is not None
    broken = result_for(spec, None, "error").model_copy(
        update={"error": ErrorInfo(code="internal", message="the runner broke")}
    )
    assert await record_result(pool, lease, broken, "box-1")
    after = await ratelimits.peek(pool, charged.user_id, "test", ROOMY.test_burst, ROOMY.test_per_hour)
    assert after == pytest.approx(before + 1, abs=0.01)
