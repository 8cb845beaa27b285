"""The CLI against the store: `arena submit --fleet cpu` queues a submission that the API service's dispatcher
runs on a runner that joined the pool, and prints the result; a pool that does not exist is refused in one line."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from tests.store.fleet_processes import Fleet, wait_live

pytestmark = pytest.mark.timeout(600)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def arena_submit(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
    env["DATABASE_URL"] = dsn
    return subprocess.run(
        [sys.executable, "-m", "arena", "submit", *args], env=env, capture_output=True, text=True, timeout=400
    )


async def test_arena_submit_fleet_runs_on_a_joined_runner(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        token = await fleet.token(pool, "cpu")
        fleet.runner("cli-runner", token).start()
        await wait_live(pool, fleet, {"cli-runner"})
        example = str(EXAMPLES / "vector_add.py")
        done = await asyncio.to_thread(arena_submit, db_dsn, "vector_add", example, "--mode", "test", "--fleet", "cpu")
        assert done.returncode == 0, done.stderr + fleet.logs()
        assert "on the fleet's `cpu` pool" in done.stderr
        # The run's events, as the store told them: the runner that took it, then each case as `--server` says it.
        assert "running on runner cli-runner (attempt 1)" in done.stderr, done.stderr
        assert re.search(r"^  test 1/\d+ .+: ok$", done.stderr, re.M), done.stderr
        assert "passed" in done.stdout
        row = await pool.fetchrow("SELECT runner, status FROM submissions ORDER BY id DESC LIMIT 1")
        assert dict(row) == {"runner": "cli-runner", "status": "passed"}

        missing = await asyncio.to_thread(arena_submit, db_dsn, "vector_add", example, "--fleet", "h100")
        assert missing.returncode != 0
        assert "No pool `h100` exists in this store (pools: cpu)" in missing.stderr
    finally:
        fleet.close()


def arena_fleet(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
    env["DATABASE_URL"] = dsn
    return subprocess.run(
        [sys.executable, "-m", "arena", "fleet", *args], env=env, capture_output=True, text=True, timeout=120
    )


async def test_arena_fleet_speaks_json_errors_included(pool: asyncpg.Pool, db_dsn: str) -> None:
    import json

    made = await asyncio.to_thread(arena_fleet, db_dsn, "token", "create", "--pool", "h100", "--json")
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)
    assert token["pool"] == "h100" and token["token"].startswith("arena-join-")
    listed = json.loads((await asyncio.to_thread(arena_fleet, db_dsn, "tokens", "--json")).stdout)
    assert [(t["id"], t["gpu_type"]) for t in listed] == [(token["id"], "h100")]
    assert token["token"] not in json.dumps(listed), "a listing never shows a token"
    assert json.loads((await asyncio.to_thread(arena_fleet, db_dsn, "runners", "--json")).stdout) == []
    refused = await asyncio.to_thread(arena_fleet, db_dsn, "revoke", "nobody", "--json")
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"]["message"].startswith("No runner is called 'nobody'")
