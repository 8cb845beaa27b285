"""`arena submit --server` and `arena submissions cancel` against a real `arena api` and the test's PostgreSQL, with no
runner in the pool (the job waits in the queue): a ranked run made before a contest's start says at once that it
counts for nothing there and why; Ctrl-C withdraws the submission on the server, as on a local run, says so in one
line and exits 130; `arena submissions cancel` withdraws another, and refuses one that had finished (exit 2, the
API's code under --json)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from arena.commands.problems import find_problem
from core.contests import ContestDraft, create_contest
from core.problems import ProblemSpec, sync_problem
from core.store import jobs
from core.tokens import create_token
from tests.cli.harness import ROOT, interrupt, start_arena, wait_for
from tests.store.fleet_processes import Fleet
from tests.store.store_helpers import GPUS, MOD
from tests.store.test_server_cli import arena, cli_env

pytestmark = pytest.mark.timeout(600)

EXAMPLE = str(ROOT / "examples" / "vector_add.py")


class Lines:
    """A process's stderr, read line by line as it comes (a thread), so that the test can wait for one."""

    def __init__(self, stream: object) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line)

    def has(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


def closed(process: subprocess.Popen[str]) -> None:
    """Close what the test holds of a process that ended: its pipes."""
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


async def test_ctrl_c_cancels_on_the_server_and_cancel_withdraws_another(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api(dispatch=False).start()
        await fleet.wait_api()
        await fleet.token(pool, "cpu")  # the pool exists; no runner joins it
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        now = datetime.now(UTC)
        start = now + timedelta(hours=2)
        draft = ContestDraft(
            "sprint", "The sprint", start, start + timedelta(hours=1), ("vector_add",), (("cpu", "float32"),)
        )
        await create_contest(pool, MOD, draft, now=now, gpus=GPUS)
        made = await create_token(pool, "discord:4242", "ada", "laptop")
        env = cli_env(tmp_path, db_dsn, ARENA_TOKEN=made.token)

        cli = start_arena("submit", "vector_add", EXAMPLE, "--mode", "ranked", "--server", fleet.api_url, env=env)
        err = Lines(cli.stderr)
        await asyncio.to_thread(wait_for, lambda: err.has("queued for pool cpu at place 1"), "the queued line")
        assert err.has("this run counts for no contest: `sprint` starts in"), err.text()
        interrupt(cli)
        await asyncio.to_thread(cli.wait, 120)
        stderr = err.text()
        closed(cli)
        assert cli.returncode == 130, stderr + fleet.logs()
        sub_id: int = await pool.fetchval("SELECT id FROM submissions ORDER BY id DESC LIMIT 1")
        assert f"submission #{sub_id} was cancelled on the server and will not run again" in stderr
        row = await pool.fetchrow("SELECT status, error_code FROM submissions WHERE id = $1", sub_id)
        assert (row["status"], row["error_code"]) == ("failed", "cancelled")
        assert [j.state for j in await jobs.jobs_of(pool, sub_id)] == ["failed"]

        # Cancelling it again: it had finished.
        again = await asyncio.to_thread(
            arena, env, "submissions", "cancel", str(sub_id), "--server", fleet.api_url, "--json"
        )
        assert again.returncode == 2, again.stderr
        assert json.loads(again.stdout)["error"]["code"] == "submission_finished"

        # Another one, left waiting (the CLI killed outright: no Ctrl-C, so nothing withdrew it), then cancelled.
        left = start_arena("submit", "vector_add", EXAMPLE, "--mode", "test", "--server", fleet.api_url, env=env)
        left_err = Lines(left.stderr)
        await asyncio.to_thread(wait_for, lambda: left_err.has("recorded as submission #"), "the second submission")
        left.kill()
        await asyncio.to_thread(left.wait, 60)
        left_err.text()
        closed(left)
        second: int = await pool.fetchval("SELECT id FROM submissions ORDER BY id DESC LIMIT 1")
        assert second != sub_id and (await jobs.jobs_of(pool, second))[0].state == "queued"
        cancelled = await asyncio.to_thread(arena, env, "submissions", "cancel", str(second), "--server", fleet.api_url)
        assert cancelled.returncode == 0, cancelled.stderr
        assert f"submission #{second} was cancelled" in cancelled.stderr
        assert [j.state for j in await jobs.jobs_of(pool, second)] == ["failed"]
    finally:
        fleet.close()
