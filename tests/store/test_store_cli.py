"""`arena db migrate|status` and `arena leaderboard`, run as a user runs them, against a real database."""

from __future__ import annotations

import os
import subprocess
import sys

import asyncpg

from core.results import record_result
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request, result_for, submit_scored


def arena(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn}
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_db_migrate_applies_the_schema_once_and_status_reports_it(empty_dsn: str):
    pending = arena(empty_dsn, "db", "status")
    assert pending.returncode == 1 and "pending" in pending.stdout and "arena db migrate" in pending.stdout
    first = arena(empty_dsn, "db", "migrate")
    assert first.returncode == 0, first.stderr
    assert "applied V001 initial" in first.stdout
    again = arena(empty_dsn, "db", "migrate")
    assert "up to date" in again.stdout
    status = arena(empty_dsn, "db", "status")
    assert status.returncode == 0, status.stderr
    assert "(DATABASE_URL)" in status.stdout and "V001" in status.stdout and "jobs queued" in status.stdout


async def test_leaderboard_command_prints_the_board_and_filters_by_language(pool: asyncpg.Pool, db_dsn: str):
    await add_problems(pool)
    await submit_scored(pool, "alice", 1500.0, language="cuda")
    await submit_scored(pool, "bob", 900.0, language="python")
    shown = arena(db_dsn, "leaderboard", "vector_add", "--gpu", "h100")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "Vector addition (vector_add v1) · h100 · float32 · cpu timing"
    ranked = [line.split()[:4] for line in lines[3:5]]
    assert ranked == [["1", "alice", "1,500", "cuda"], ["2", "bob", "900", "python"]]
    python_only = arena(db_dsn, "leaderboard", "vector_add", "--lang", "python")
    assert "python only" in python_only.stdout and "alice" not in python_only.stdout


def test_leaderboard_of_an_unknown_problem_says_so(db_dsn: str):
    shown = arena(db_dsn, "leaderboard", "no_such_problem")
    assert shown.returncode == 2
    assert "no problem called `no_such_problem`" in shown.stderr


async def test_leaderboard_command_shows_one_timing_methods_board_and_names_it(pool: asyncpg.Pool, db_dsn: str):
    await add_problems(pool)
    await submit_scored(pool, "alice", 1500.0)  # timed by the `cpu` method (store_helpers.result_for)
    receipt = await submit(pool, request("bob"), ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert lease is not None and spec is not None
    reported = result_for(spec, 9000.0)
    seed = reported.model_copy(update={"timings": [t.model_copy(update={"method": "seed"}) for t in reported.timings]})
    assert await record_result(pool, lease, seed, "test-runner")

    default = arena(db_dsn, "leaderboard", "vector_add", "--gpu", "h100")
    assert default.returncode == 0, default.stderr
    assert default.stdout.splitlines()[0].endswith("· cpu timing")
    assert "alice" in default.stdout and "bob" not in default.stdout
    assert "h100/float32/seed (1)" in default.stderr  # the other board is named, not merged
    by_seed = arena(db_dsn, "leaderboard", "vector_add", "--gpu", "h100", "--method", "seed")
    assert by_seed.stdout.splitlines()[0].endswith("· seed timing")
    assert "bob" in by_seed.stdout and "alice" not in by_seed.stdout
