"""`arena web` as an operator runs it: a real process that serves the store's pages until Ctrl-C."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

import asyncpg

from tests.cli.harness import arena, arena_env, assert_one_line_error, interrupt, start_arena, wait_for
from tests.web.web_helpers import seed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


async def test_arena_web_serves_the_stores_pages_until_ctrl_c(pool: asyncpg.Pool, db_dsn: str, tmp_path: Path) -> None:
    await seed(pool)
    port = _free_port()
    env = arena_env(tmp_path / "pg", DATABASE_URL=db_dsn, ARENA_WEB_PORT=str(port))
    process = start_arena("web", env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _get(f"{base}/healthz")[0] == 200 or process.poll() is not None, "arena web to answer")
        assert process.poll() is None, process.communicate()
        status, page = _get(f"{base}/problems/vector_add")
        assert status == 200 and "bob" in page
    finally:
        interrupt(process)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_arena_web_on_a_port_in_use_says_so_in_one_line(db_dsn: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = arena_env(tmp_path / "pg", DATABASE_URL=db_dsn)
        proc = arena("web", "--port", str(port), env=env, timeout=120)
    assert_one_line_error(proc, f"Cannot listen on 127.0.0.1:{port}", "--port")
