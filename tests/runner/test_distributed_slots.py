"""A real CPU daemon with rank slots of 2 and 4 (RUNNER_RANK_SLOTS): it reports them, runs a distributed job on
them through its signed API with real gloo processes, names a wrong rank, refuses in words a world size it does not
offer, and still runs a one-device job beside them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from contract.wire import JobRequest
from runner.clients.http import RunnerClient, RunnerError
from runner.host.executor import Executor
from runner.job.distributed import run_distributed_job
from tests.runner.conftest import (
    EXAMPLES,
    Daemon,
    good_request,
    job_request,
    serve_daemon,
    settings_for,
)
from tests.runner.conftest import run_remote as run_job

DISTRIBUTED = EXAMPLES / "distributed"
RANK_SLOTS = [2, 4]


@pytest.fixture(scope="module")
def rank_daemon(state_root: Path) -> Iterator[Daemon]:
    """`python -m runner serve` on the CPU with a slot of 2 ranks and one of 4, for this module's tests."""
    env = {"RUNNER_DEVICE": "cpu", "RUNNER_RANK_SLOTS": str(RANK_SLOTS), "RUNNER_WARM_WORKERS": "false"}
    yield from serve_daemon(state_root, "rank-daemon", **env)


@pytest.fixture
async def ranks(rank_daemon: Daemon) -> AsyncIterator[RunnerClient]:
    async with rank_daemon.client() as client:
        yield client


def distributed_request(example: str, slug: str, world_size: int, **fields: object) -> JobRequest:
    source = (DISTRIBUTED / example).read_text(encoding="utf-8")
    # Two timed samples after the warm-up: enough to show each rank's time, and quick on a busy 2-core machine.
    values: dict[str, object] = {"problem_slug": slug, "world_size": world_size, "mode": "benchmark"}
    values["measure"] = {"method": "cpu", "min_samples": 2, "max_samples": 2}
    values.update(fields)
    return job_request(source, **values)


async def test_the_runner_reports_its_rank_slots_beside_its_one_device_slot(ranks: RunnerClient) -> None:
    health = await ranks.health()
    assert health.slots == 1 and health.device == "cpu"
    assert health.rank_slots == RANK_SLOTS
    assert health.topology is None  # no GPU here, so no links to report


@pytest.mark.parametrize("world_size", RANK_SLOTS)
async def test_an_honest_all_reduce_passes_on_a_slot_of_its_world_size(ranks: RunnerClient, world_size: int) -> None:
    result, _ = await run_job(ranks, distributed_request("all_reduce.py", "all-reduce", world_size))
    assert result.status == "passed", result.error
    assert result.world_size == world_size and f"x{world_size} ranks" in result.device
    assert result.score_metric == "gbps" and result.geomean_gbps is not None
    assert [t.passed for t in result.tests] == [True] * len(result.tests) and result.tests
    assert len(result.timings) == len(result.tests)
    for timing in result.timings:
        assert timing.samples == 2
        per_rank = timing.rank_runtime_median_us
        assert per_rank is not None and len(per_rank) == world_size and min(per_rank) > 0
        # Each sample's time is its slowest rank's, so the median is at least the fastest rank's median.
        assert timing.runtime_median_us >= min(per_rank)
    assert any(f"{world_size} ranks" in note for note in result.notes)


async def test_a_wrong_rank_fails_verification_and_the_result_names_it(ranks: RunnerClient) -> None:
    request = distributed_request("all_reduce_wrong_rank.py", "all-reduce", 2, mode="test")
    result, _ = await run_job(ranks, request)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "wrong_answer"
    assert result.error.message.startswith("Rank 1 gave a wrong output") and "Failing ranks: 1." in result.error.message
    assert all(not t.passed and t.details["failing_ranks"] == [1] for t in result.tests)
    assert not result.timings


@pytest.mark.parametrize(
    ("slug", "world_size", "words"),
    [
        ("all-reduce", 8, "no slot of 8 ranks (its rank slots have 2, 4 ranks; RUNNER_RANK_SLOTS sets them)"),
        ("all-reduce", 3, "is a distributed problem for 2, 4, 8 ranks, and the job has world_size 3"),
        ("all-reduce", 1, "and the job has no world_size (so 1): set world_size to one of 2, 4, 8"),
        ("vector_add", 2, "vector_add runs on one device, and the job asks for world_size 2"),
    ],
)
async def test_a_world_size_the_runner_or_problem_does_not_offer_is_refused_in_words(
    ranks: RunnerClient, slug: str, world_size: int, words: str
) -> None:
    request = distributed_request("all_reduce.py", slug, world_size)
    with pytest.raises(RunnerError) as refused:
        await ranks.submit(request)
    assert refused.value.status == 400 and refused.value.code == "bad_request"
    assert words in refused.value.message


async def test_a_one_device_job_still_runs_on_the_same_daemon(ranks: RunnerClient) -> None:
    result, _ = await run_job(ranks, good_request())
    assert result.status == "passed", result.error
    assert result.world_size == 1 and "ranks" not in result.device
    assert all(t.rank_runtime_median_us is None for t in result.timings)


def _processes_of(uid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        real = next((line.split()[1] for line in lines if line.startswith("Uid:")), None)
        state = next((line.split()[1] for line in lines if line.startswith("State:")), "")
        # A zombie runs nothing: it waits for whoever adopted it to read its status.
        if real == str(uid) and state != "Z":
            found.append(int(status.parent.name))
    return found


async def test_a_hanging_job_is_stopped_at_its_deadline_with_every_rank(state_dir: Path, secret: str) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secret, job_timeout_s=8.0))
    hang = "import time\n\n\ndef solution(*args):\n    time.sleep(3600)\n"
    request = job_request(hang, problem_slug="all-reduce", world_size=2, mode="test")
    slot_index = 5  # a uid of its own, apart from the module's daemon
    try:
        result = await run_distributed_job(request, executor=executor, slot_index=slot_index)
    finally:
        assert executor.lease is not None
        executor.lease.release()
    assert result.status == "error" and result.error is not None and result.error.code == "timeout"
    # The message names the job's deadline: the job's limit, not the ranks' own collective timeout, stopped it.
    assert "8 s limit" in result.error.message and result.world_size == 2
    uid = executor.sandbox.uid_for(slot_index)
    if uid is not None:  # the daemon runs as root: every process of the job ran as the slot's uid
        left = _processes_of(uid)
        assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes()[:300] for pid in left]
