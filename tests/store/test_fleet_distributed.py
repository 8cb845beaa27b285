"""A distributed problem through the service, end to end on the CPU: `arena submit SLUG FILE --world-size 2` with
`--fleet cpu` (through the store) or `--server URL` (through the API, with a personal token) queues a submission
whose job waits in the pool's rank pool (`cpux2`), the API service's dispatcher sends it to a runner that
registered a slot of 2 ranks (RUNNER_RANK_SLOTS), and the result is stored with its world size."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from core.tokens import create_token
from tests.store.fleet_processes import Fleet, wait_live
from tests.store.test_fleet_cli import arena_submit
from tests.store.test_server_cli import arena, cli_env

pytestmark = pytest.mark.timeout(600)

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "distributed" / "all_gather.py")
ARGS = ("all-gather", EXAMPLE, "--mode", "test")
# What a refused world size says to give instead: the world sizes all-gather declares.
SIZES_TO_GIVE = "--world-size 2 (or another of 2, 4, 8)"


async def start_rank_fleet(pool: asyncpg.Pool, fleet: Fleet) -> None:
    """The API service (dispatching) and one CPU runner, `ranks`, whose only rank slot has 2 ranks."""
    fleet.api().start()
    await fleet.wait_api()
    token = await fleet.token(pool, "cpu")
    fleet.runner("ranks", token, RUNNER_RANK_SLOTS="[2]").start()
    await wait_live(pool, fleet, {"ranks"})


async def assert_stored_on_two_ranks(pool: asyncpg.Pool) -> None:
    """The latest submission and its job ran on the runner's slot of 2 ranks, and are stored so."""
    row = await pool.fetchrow("SELECT runner, status, gpu_type, world_size FROM submissions ORDER BY id DESC LIMIT 1")
    assert dict(row) == {"runner": "ranks/x2", "status": "passed", "gpu_type": "cpux2", "world_size": 2}
    job = await pool.fetchrow("SELECT gpu_type, runner, state FROM jobs ORDER BY id DESC LIMIT 1")
    assert dict(job) == {"gpu_type": "cpux2", "runner": "ranks/x2", "state": "done"}


async def test_a_distributed_submission_runs_on_a_rank_slot_and_is_stored_with_its_world_size(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    try:
        await start_rank_fleet(pool, fleet)
        args = (*ARGS, "--fleet", "cpu")
        done = await asyncio.to_thread(arena_submit, db_dsn, *args, "--world-size", "2", "--json")
        assert done.returncode == 0, done.stderr + done.stdout + fleet.logs()
        result = json.loads(done.stdout)
        assert result["status"] == "passed" and result["world_size"] == 2, result
        await assert_stored_on_two_ranks(pool)

        # A world size the problem does not declare is refused before anything is stored, saying what to give.
        wrong = await asyncio.to_thread(arena_submit, db_dsn, *args, "--world-size", "3", "--json")
        assert wrong.returncode == 2, wrong.stdout
        assert SIZES_TO_GIVE in json.loads(wrong.stdout)["error"]["message"]
        assert await pool.fetchval("SELECT count(*) FROM submissions") == 1
    finally:
        fleet.close()


async def test_a_distributed_submission_through_the_api_runs_on_a_rank_slot(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """`arena submit … --world-size 2 --server URL` with a personal token, against an API that registered all-gather
    itself (no bot ran): the API takes the world size, the job runs on the slot of 2 ranks, and the board the API
    serves says it is a board of 2 ranks."""
    fleet = Fleet(db_dsn, tmp_path)
    try:
        # No registration here: the API registers the built-in problems, the distributed ones too, as it starts.
        await start_rank_fleet(pool, fleet)
        assert await pool.fetchval("SELECT count(*) FROM problems WHERE slug = 'all-gather'") == 1
        made = await create_token(pool, "discord:4242", "ada", "laptop")
        env = cli_env(tmp_path, db_dsn, ARENA_TOKEN=made.token)
        server = ("--server", fleet.api_url, "--json")
        done = await asyncio.to_thread(arena, env, "submit", *ARGS, "--world-size", "2", *server)
        assert done.returncode == 0, done.stderr + done.stdout + fleet.logs()
        result = json.loads(done.stdout)
        assert result["status"] == "passed" and result["world_size"] == 2, result
        await assert_stored_on_two_ranks(pool)

        # A world size all-gather does not declare: the CLI refuses it before the upload, and the API refuses it
        # from a client that sent it anyway; each says what to give, and neither stores anything.
        wrong = await asyncio.to_thread(arena, env, "submit", *ARGS, "--world-size", "3", *server)
        assert wrong.returncode == 2, wrong.stdout + wrong.stderr
        assert SIZES_TO_GIVE in json.loads(wrong.stdout)["error"]["message"]
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {made.token}"}) as http:
            form = aiohttp.FormData({"problem": "all-gather", "mode": "test", "world_size": "3"})
            form.add_field("file", Path(EXAMPLE).read_bytes(), filename="all_gather.py")
            async with http.post(f"{fleet.api_url}/v1/submissions", data=form) as response:
                refusal = await response.json()
                assert response.status == 422, refusal
            assert "choose a world size of 2, 4, 8" in refusal["detail"], refusal
            assert await pool.fetchval("SELECT count(*) FROM submissions") == 1

            # The board the API serves says it is a board of 2 ranks.
            async with http.get(f"{fleet.api_url}/v1/leaderboards/all-gather?gpu_type=cpux2") as response:
                assert response.status == 200, await response.text()
                board = await response.json()
        assert (board["gpu_type"], board["world_size"]) == ("cpux2", 2), board
    finally:
        fleet.close()
