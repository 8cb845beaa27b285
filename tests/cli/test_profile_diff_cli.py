"""`arena profile diff A [B] --server URL` against the real API (aiohttp's test server on a port of this machine, the
real store) with a personal token: `--json` prints the API's `ProfileDiff` of two recorded H100 profiles, B is
chosen when left out, the text names the figures as `core.views.profile_diff` formats them, and a refusal is
`{"error": {...}}` with the API's code and the exit code of a refused request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from api.app import create_app
from api.settings import ApiSettings
from arena.cli import main
from arena.server_client import EXIT_REFUSED
from core.tokens import create_token
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.profiled_runs import cuda, recorded, run_of
from tests.store.store_helpers import MATMUL, add_problems


@pytest.fixture
async def server(pool: asyncpg.Pool) -> AsyncIterator[str]:  # noqa: F811
    await add_problems(pool, MATMUL)
    test_server = TestServer(create_app(pool, ApiSettings(dispatch=False)), host="127.0.0.1")
    await test_server.start_server()
    try:
        yield str(test_server.make_url("")).rstrip("/")
    finally:
        await test_server.close()


async def arena(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str]:
    """The command's exit code and stdout; run in a thread, as it runs its own event loop."""
    code = await asyncio.to_thread(main, list(words))
    return code, capsys.readouterr().out


async def test_profile_diff_prints_the_apis_json_and_the_text_of_the_same_figures(
    server: str,
    pool: asyncpg.Pool,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"))
    tiled = await run_of(pool, "ada", cuda("tiled"), report=recorded("tiled", kernel_name="matmul_kernel"))
    made = await create_token(pool, "discord:ada", "ada", "laptop", scopes="read")
    monkeypatch.setenv("ARENA_TOKEN", made.token)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    code, out = await arena(capsys, "profile", "diff", str(naive), str(tiled), "--server", server, "--json")
    assert code == 0
    body = json.loads(out)
    assert (body["a"]["submission_id"], body["b"]["submission_id"], body["b_chosen"]) == (naive, tiled, "given")
    assert body["kernels"][0]["duration_us"]["change_pct"] == pytest.approx(-58.42, abs=0.01)

    code, out = await arena(capsys, "profile", "diff", str(tiled), "--server", server, "--json")
    assert code == 0 and json.loads(out)["b"]["submission_id"] == naive
    assert json.loads(out)["b_chosen"] == "own_fastest"

    code, out = await arena(capsys, "profile", "diff", str(naive), str(tiled), "--server", server)
    assert code == 0
    assert "matmul on h100: B took 19.79 ms against A's 47.60 ms: 2.40× faster (58.4 % less time)." in out
    assert f"A: #{naive} solution.cu by ada (cuda, float32, case m=4096,n=4096,k=4096)" in out
    time_row = next(line for line in out.splitlines() if line.startswith("time "))
    assert time_row.split() == ["time", "47.60", "ms", "19.79", "ms", "-27.81", "ms", "(-58.4", "%)"]
    assert "top stalls (A → B): long_scoreboard 91 % → 14 %" in out


async def test_a_refusal_is_the_json_error_with_the_apis_code(
    server: str,
    pool: asyncpg.Pool,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    alone = await run_of(pool, "ada", cuda("alone"), report=recorded("naive"))
    made = await create_token(pool, "discord:ada", "ada", "laptop", scopes="read")
    monkeypatch.setenv("ARENA_TOKEN", made.token)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    code, out = await arena(capsys, "profile", "diff", str(alone), "--server", server, "--json")
    assert code == EXIT_REFUSED
    error = json.loads(out)["error"]
    assert (error["code"], error["status"]) == ("nothing_to_compare", 404)
    assert "Profile another version of your kernel" in error["message"]
