"""A distributed problem through the service, end to end on the CPU: `arena submit SLUG FILE --world-size 2 --fleet
cpu` queues a submission whose job waits in the pool's rank pool (`cpux2`), the API service's dispatcher sends it
to a runner that registered a slot of 2 ranks (RUNNER_RANK_SLOTS), and the result is stored with its world size."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import asyncpg
import pytest

from tests.store.fleet_processes import Fleet, wait_live
from tests.store.test_fleet_cli import arena_submit

pytestmark = pytest.mark.timeout(600)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "distributed"


async def test_a_distributed_submission_runs_on_a_rank_slot_and_is_stored_with_its_world_size(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        token = await fleet.token(pool, "cpu")
        fleet.runner("ranks", token, RUNNER_RANK_SLOTS="[2]").start()
        await wait_live(pool, fleet, {"ranks"})
        example = str(EXAMPLES / "all_gather.py")
        args = ("all-gather", example, "--mode", "test", "--fleet", "cpu")
        done = await asyncio.to_thread(arena_submit, db_dsn, *args, "--world-size", "2", "--json")
        assert done.returncode == 0, done.stderr + done.stdout + fleet.logs()
        result = json.loads(done.stdout)
        assert result["status"] == "passed" and result["world_size"] == 2, result
        row = await pool.fetchrow(
            "SELECT runner, status, gpu_type, world_size FROM submissions ORDER BY id DESC LIMIT 1"
        )
        assert dict(row) == {"runner": "ranks/x2", "status": "passed", "gpu_type": "cpux2", "world_size": 2}
        job = await pool.fetchrow("SELECT gpu_type, runner, state FROM jobs ORDER BY id DESC LIMIT 1")
        assert dict(job) == {"gpu_type": "cpux2", "runner": "ranks/x2", "state": "done"}

        # A world size the problem does not declare is refused before anything is stored, saying what to give.
        wrong = await asyncio.to_thread(arena_submit, db_dsn, *args, "--world-size", "3", "--json")
        assert wrong.returncode == 2, wrong.stdout
        assert "--world-size 2 (or another of 2, 4, 8)" in json.loads(wrong.stdout)["error"]["message"]
        assert await pool.fetchval("SELECT count(*) FROM submissions") == 1
    finally:
        fleet.close()
