"""The `profile_diff` tool of `arena mcp`, called by the SDK's own client connected in-process to the real tool
server, which speaks to the real API (aiohttp's test server on a port of this machine, the real store) with a
personal token: it answers the API's `ProfileDiff` of two recorded H100 profiles as structured content, is
announced as a read, and a refusal is a tool error that starts with the API's code."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestServer
from mcp import Client
from mcp.types import TextContent

from api.app import create_app
from api.settings import ApiSettings
from arena.mcp_server import build_server
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


async def test_the_profile_diff_tool_answers_the_apis_diff_and_refusals_carry_its_code(
    server: str,
    pool: asyncpg.Pool,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"))
    tiled = await run_of(pool, "ada", cuda("tiled"), report=recorded("tiled", kernel_name="matmul_kernel"))
    made = await create_token(pool, "discord:ada", "ada", "agent", scopes="read")
    monkeypatch.setenv("ARENA_TOKEN", made.token)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    async with Client(build_server(server)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["profile_diff"].annotations is not None and listed["profile_diff"].annotations.read_only_hint
        found = await client.call_tool("profile_diff", {"a": naive, "b": tiled})
        assert not found.is_error and found.structured_content is not None
        body = found.structured_content
        assert (body["a"]["submission_id"], body["b"]["submission_id"]) == (naive, tiled)
        assert body["totals"]["speedup"] == pytest.approx(2.405, abs=0.001)
        text = "".join(block.text for block in found.content if isinstance(block, TextContent))
        assert json.loads(text) == body

        chosen = await client.call_tool("profile_diff", {"a": tiled})
        assert chosen.structured_content is not None and chosen.structured_content["b_chosen"] == "own_fastest"

        refused = await client.call_tool("profile_diff", {"a": 10**9})
        assert refused.is_error
        message = "".join(block.text for block in refused.content if isinstance(block, TextContent))
        # The SDK says which tool failed; the tool's own text starts with the code.
        assert "submission_not_found: There is no profiled run" in message
