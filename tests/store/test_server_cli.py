"""The CLI against a server, end to end: `arena login` → `arena submit --server` → its events → its result → the
leaderboard, against a real `arena api` (dispatching), the test's PostgreSQL and a CPU runner that joined its pool
with a bootstrap token. The token is a personal one of a Discord user, so the run is theirs: their quota, their
place on the board."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from arena.commands.problems import find_problem
from core.problems import ProblemSpec, sync_problem
from core.store import jobs
from core.tokens import create_token
from tests.runner.conftest import free_port
from tests.store.fleet_processes import SLOW_SOLUTION, Fleet, wait_live, wait_until

pytestmark = pytest.mark.timeout(600)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def arena(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], env=env, capture_output=True, text=True, timeout=400, check=False
    )


def cli_env(tmp: Path, dsn: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
    env |= {"XDG_CONFIG_HOME": str(tmp / "config"), "XDG_STATE_HOME": str(tmp / "state"), "DATABASE_URL": dsn}
    return env | extra


async def test_login_submit_follow_result_and_board_through_the_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        fleet.runner("cli-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"cli-runner"})
        # The bot registers the built-in problems in the store when it starts; here, the one this test runs.
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        made = await create_token(pool, "discord:4242", "ada", "laptop")
        env = cli_env(tmp_path, db_dsn)

        login = await asyncio.to_thread(arena, env | {"ARENA_TOKEN": made.token}, "login", "--server", fleet.api_url)
        assert login.returncode == 0, login.stderr + fleet.logs()
        kept = tmp_path / "config" / "kernel-arena" / "server.json"
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert json.loads(kept.read_text()) == {"server": fleet.api_url, "token": made.token}

        # From here on, the kept token: no ARENA_TOKEN, and `--server` without a URL means the kept server.
        example = EXAMPLES / "vector_add.py"
        ranked = await asyncio.to_thread(
            arena, env, "submit", "vector_add", str(example), "--mode", "ranked", "--server"
        )
        assert ranked.returncode == 0, ranked.stderr + fleet.logs()
        assert "recorded as submission #" in ranked.stderr
        assert "queued for pool cpu at place 1" in ranked.stderr or "dispatched on runner cli-runner" in ranked.stderr
        assert "running on runner cli-runner (attempt 1)" in ranked.stderr
        assert "test 1/3" in ranked.stderr and "benchmark 1/3" in ranked.stderr, "the per-case lines of a local run"
        assert "geometric mean" in ranked.stdout and "timing method: cpu" in ranked.stdout
        row = await pool.fetchrow(
            "SELECT s.id, s.status, s.runner, u.external_id FROM submissions s JOIN users u ON u.id = s.user_id"
        )
        assert (row["status"], row["runner"], row["external_id"]) == ("passed", "cli-runner", "discord:4242")

        streamed = await asyncio.to_thread(
            arena, env, "submit", "vector_add", str(example), "--mode", "test", "--server", "--stream", "--json"
        )
        assert streamed.returncode == 0, streamed.stderr + fleet.logs()
        events = [json.loads(line) for line in streamed.stdout.splitlines()]
        assert events[0]["type"] == "submitted" and events[-1]["type"] == "result"
        assert {"dispatched", "running"} <= {e["type"] for e in events}
        kept_ids = [e["id"] for e in events if "id" in e]
        assert kept_ids == sorted(set(kept_ids)), "kept events once each, in order"
        assert events[-1]["result"]["status"] == "passed" and events[-1]["state"] == "done"

        listed = await asyncio.to_thread(arena, env, "submissions", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        items = json.loads(listed.stdout)["items"]
        assert [(s["id"], s["mode"]) for s in items] == [(events[0]["submission_id"], "test"), (row["id"], "ranked")]
        shown = await asyncio.to_thread(arena, env, "submissions", "show", str(row["id"]))
        assert shown.returncode == 0 and "geometric mean" in shown.stdout, shown.stderr
        code = await asyncio.to_thread(arena, env, "submissions", "code", str(row["id"]))
        assert code.stdout == example.read_text()

        board = await asyncio.to_thread(arena, env, "leaderboard", "vector_add", "--gpu", "cpu")
        assert board.returncode == 0, board.stderr
        assert "ada" in board.stdout and f"#{row['id']}" in board.stdout
        # The same board through the API, with the caller's own row.
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {made.token}"}) as http:
            async with http.get(f"{fleet.api_url}/v1/leaderboards/vector_add?gpu_type=cpu") as response:
                assert response.status == 200, await response.text()
                api_board = await response.json()
        assert [(e["rank"], e["user"], e["submission_id"]) for e in api_board["entries"]] == [(1, "ada", row["id"])]
        assert api_board["caller"]["submission_id"] == row["id"]

        # Another user's submission reads as not found, with the API's code and exit 2.
        other = await create_token(pool, "discord:7", "bob", "laptop")
        hidden = await asyncio.to_thread(
            arena, env | {"ARENA_TOKEN": other.token}, "submissions", "code", str(row["id"]), "--json"
        )
        assert hidden.returncode == 2, hidden.stderr
        assert json.loads(hidden.stdout)["error"]["code"] == "submission_not_found"
    finally:
        fleet.close()


async def test_a_service_account_token_made_in_the_cli_submits_through_the_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """An operator makes a token for a service account with `arena token create` (no Discord); a CI job submits
    with it through a real `arena api` and lands on the board as itself; a read-only token may not submit, and a
    revoked one is refused."""
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        fleet.runner("svc-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"svc-runner"})
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        env = cli_env(tmp_path, db_dsn)
        made = await asyncio.to_thread(
            arena, env, "token", "create", "--user", "ci-bot", "--scopes", "read,submit", "--days", "7", "--json"
        )
        assert made.returncode == 0, made.stderr
        created = json.loads(made.stdout)
        assert created["user"] == "service:ci-bot" and created["scopes"] == ["read", "submit"]
        example = str(EXAMPLES / "vector_add.py")
        as_bot = env | {"ARENA_TOKEN": created["token"]}
        ranked = await asyncio.to_thread(
            arena, as_bot, "submit", "vector_add", example, "--mode", "ranked", "--server", fleet.api_url, "--json"
        )
        assert ranked.returncode == 0, ranked.stderr + fleet.logs()
        assert json.loads(ranked.stdout)["status"] == "passed"
        owner = await pool.fetchrow(
            "SELECT u.external_id, u.display_name FROM submissions s JOIN users u ON u.id = s.user_id"
        )
        assert (owner["external_id"], owner["display_name"]) == ("service:ci-bot", "ci-bot")
        board = await asyncio.to_thread(arena, env, "leaderboard", "vector_add", "--gpu", "cpu", "--json")
        assert [e["user"] for e in json.loads(board.stdout)["entries"]] == ["ci-bot"], board.stdout

        reader = await asyncio.to_thread(
            arena, env, "token", "create", "--user", "ci-bot", "--scopes", "read", "--name", "dash", "--json"
        )
        read_only = env | {"ARENA_TOKEN": json.loads(reader.stdout)["token"]}
        refused = await asyncio.to_thread(
            arena, read_only, "submit", "vector_add", example, "--mode", "test", "--server", fleet.api_url, "--json"
        )
        assert refused.returncode == 3 and json.loads(refused.stdout)["error"]["code"] == "insufficient_scope"

        listed = await asyncio.to_thread(arena, env, "token", "list", "--user", "ci-bot", "--json")
        assert [t["name"] for t in json.loads(listed.stdout)["tokens"]] == ["dash", "cli"]
        revoked = await asyncio.to_thread(
            arena, env, "token", "revoke", str(created["id"]), "--user", "ci-bot", "--json"
        )
        assert revoked.returncode == 0 and json.loads(revoked.stdout)["revoked_at"] is not None
        again = await asyncio.to_thread(
            arena, as_bot, "submit", "vector_add", example, "--mode", "test", "--server", fleet.api_url, "--json"
        )
        assert again.returncode == 3 and json.loads(again.stdout)["error"]["code"] == "token_revoked"
    finally:
        fleet.close()


BATCH_VARIANTS = {
    "add_out.py": (EXAMPLES / "vector_add.py").read_text(),
    "copy_add.py": "def solution(a, b, c, n):\n    c.copy_(a)\n    c.add_(b)\n",
    "wrong.py": "def solution(a, b, c, n):\n    c.copy_(a)\n",
}


async def test_a_batch_of_three_variants_is_submitted_followed_and_ranked_from_the_cli(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """`arena submit SLUG a.py b.py c.py --server`: one batch, three submissions on the CPU runner, each variant's
    progress on stderr, and the table that ranks the two that passed, the wrong one last."""
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        fleet.runner("batch-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"batch-runner"})
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        made = await create_token(pool, "discord:5150", "eve", "sweep")
        paths = []
        for name, text in BATCH_VARIANTS.items():
            (tmp_path / name).write_text(text)
            paths.append(str(tmp_path / name))
        env = cli_env(tmp_path, db_dsn, ARENA_TOKEN=made.token)
        argv = ["submit", "vector_add", *paths, "--mode", "benchmark", "--server", fleet.api_url, "--json"]
        batch = await asyncio.to_thread(arena, env, *argv)
        assert batch.returncode == 1, batch.stderr + fleet.logs()  # one variant failed
        view = json.loads(batch.stdout)
        assert view["state"] == "done" and view["counts"] == {"passed": 2, "failed": 1}
        rows = [(v["rank"], v["submission"]["file_name"], v["submission"]["status"]) for v in view["variants"]]
        assert sorted(rows[:2], key=lambda r: r[1]) in (
            [(1, "add_out.py", "passed"), (2, "copy_add.py", "passed")],
            [(2, "add_out.py", "passed"), (1, "copy_add.py", "passed")],
            [(1, "add_out.py", "passed"), (1, "copy_add.py", "passed")],
        )
        assert rows[2] == (None, "wrong.py", "failed")
        assert "Batch #" in batch.stderr and "wrong.py: failed" in batch.stderr and "add_out.py: passed" in batch.stderr
        owned = await pool.fetch("SELECT submission_id FROM batch_members WHERE batch_id = $1", view["id"])
        assert sorted(r["submission_id"] for r in owned) == sorted(v["submission"]["id"] for v in view["variants"])

        # A batch as a person reads it; and several files without --server, refused in one line.
        argv = ["submit", "vector_add", *paths[:2], "--mode", "test", "--server", fleet.api_url]
        table = await asyncio.to_thread(arena, env, *argv)
        assert table.returncode == 0, table.stderr
        assert "variant" in table.stdout and "copy_add.py" in table.stdout and "2 passed" in table.stdout
        local = await asyncio.to_thread(arena, env, "submit", "vector_add", *paths[:2], "--json")
        assert local.returncode == 2 and "--server" in json.loads(local.stdout)["error"]["message"]
    finally:
        fleet.close()


async def test_a_stream_cut_by_an_api_restart_resumes_with_no_event_lost_or_repeated(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """`arena submit --server --stream` follows a submission on an API replica that does not dispatch; that replica is
    killed mid-job and started again on its port. The CLI reopens the stream with Last-Event-ID and prints every
    kept event once, in the store's order."""
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api("dispatcher").start()
        await fleet.wait_api()
        fleet.runner("slow-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"slow-runner"})
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        made = await create_token(pool, "discord:99", "cy", "agent")
        replica = fleet.api("reader", dispatch=False, port=free_port())
        replica.start()
        await fleet.wait_api()
        solution = tmp_path / "slow.py"
        solution.write_bytes(SLOW_SOLUTION)  # the job runs for seconds: time to lose the replica
        env = cli_env(tmp_path, db_dsn, ARENA_TOKEN=made.token)
        argv = ["submit", "vector_add", str(solution), "--mode", "test", "--server", fleet.api_url, "--stream"]
        cli = subprocess.Popen(
            [sys.executable, "-m", "arena", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        job_id = await _running_job(pool, fleet)
        replica.stop(signal.SIGKILL)
        killed_at = datetime.now(UTC)
        await asyncio.sleep(1.0)  # the CLI finds the stream cut and retries against nothing for a while
        fleet.api("reader", dispatch=False, port=fleet.api_port).start()
        out, err = await asyncio.to_thread(cli.communicate, timeout=300)
        assert cli.returncode == 0, out[-3000:] + err + fleet.logs()
        events = [json.loads(line) for line in out.splitlines()]
        moves = await pool.fetch("SELECT id FROM job_transitions WHERE job_id = $1 ORDER BY id", job_id)
        assert [e["id"] for e in events if "id" in e] == [0, *(m["id"] for m in moves)], out
        assert events[-1]["type"] == "result" and events[-1]["result"]["status"] == "passed"
        ended_at = datetime.fromisoformat(events[-1]["at"])
        assert ended_at > killed_at, "the result came after the cut, so through a second stream"
        job = await jobs.get_job(pool, job_id)
        assert job is not None and job.attempts == 1, "the replica's restart did not touch the job"
    finally:
        fleet.close()


async def _running_job(pool: asyncpg.Pool, fleet: Fleet) -> int:
    """The id of the one job, once it runs."""

    async def running() -> bool:
        return bool(await pool.fetchval("SELECT count(*) FROM jobs WHERE state = 'running'"))

    await wait_until(running, 120.0, "the job did not start", fleet.logs)
    job_id: int = await pool.fetchval("SELECT id FROM jobs ORDER BY id DESC LIMIT 1")
    return job_id
