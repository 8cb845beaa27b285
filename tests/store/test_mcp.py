"""`arena mcp` end to end: an MCP client (the SDK's own stdio client) starts the real command, which speaks to a
real `arena api` (dispatching) on the test's PostgreSQL, with a CPU runner that joined its pool; the token is a
user's personal one, so the runs are theirs. The client lists the tools, reads the problems, submits a batch of
three variants while following its progress notifications, reads one result and the board, gets a refusal back as a
tool error carrying the API's code, and gives up on a slow run, which withdraws it on the server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from arena.commands.problems import find_problem
from core.problems import ProblemSpec, sync_problem
from core.tokens import create_token
from tests.store.fleet_processes import SLOW_SOLUTION, Fleet, wait_live, wait_until

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"problems", "show", "starter", "submit", "result", "leaderboard", "profile", "profile_diff"}
SIGNATURE = "import torch\n\n\ndef solution(input_a, input_b, output_c, n):\n"
ADD_OUT = SIGNATURE + "    torch.add(input_a, input_b, out=output_c)\n"
ADD_IN_PLACE = SIGNATURE + "    output_c.copy_(input_a)\n    output_c.add_(input_b)\n"
COPY_ONLY = SIGNATURE + "    output_c.copy_(input_a)\n"


def server_params(api_url: str, token: str, tmp: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
    env |= {
        "ARENA_SERVER": api_url,
        "ARENA_TOKEN": token,
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_STATE_HOME": str(tmp / "state"),
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "arena", "mcp"], env=env, cwd=ROOT)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def structured(result: CallToolResult, why: str) -> dict[str, Any]:
    assert not result.is_error, text_of(result) + why
    assert result.structured_content is not None, text_of(result)
    # The same answer as JSON text, for clients that read only the text.
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content


async def test_an_agent_lists_submits_a_batch_reads_its_result_and_the_board_over_mcp(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    fleet = Fleet(db_dsn, tmp_path)
    server_log = tmp_path / "mcp-server.log"
    try:
        fleet.api().start()
        await fleet.wait_api()
        fleet.runner("mcp-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"mcp-runner"})
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        made = await create_token(pool, "discord:1", "ada", "agent")

        def logs() -> str:
            return f"\n--- {server_log.name}\n{server_log.read_text(errors='replace')[-3000:]}\n{fleet.logs()}"

        with server_log.open("w") as errlog:
            params = server_params(fleet.api_url, made.token, tmp_path)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                assert TOOLS <= {tool.name for tool in listed.tools}

                problems = structured(await session.call_tool("problems", {}), logs())
                vector = next(p for p in problems["problems"] if p["slug"] == "vector-addition")
                assert "vector_add" in vector["aliases"]

                steps: list[tuple[float, str | None]] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    steps.append((progress, message))

                variants = [
                    {"file_name": "add_out.py", "source": ADD_OUT},
                    {"file_name": "add_in_place.py", "source": ADD_IN_PLACE},
                    {"file_name": "copy_only.py", "source": COPY_ONLY},
                ]
                submitted = await session.call_tool(
                    "submit",
                    {"slug": "vector_add", "variants": variants, "mode": "benchmark"},
                    progress_callback=on_progress,
                )
                table = structured(submitted, logs())
                assert table["state"] == "done" and len(table["variants"]) == 3
                by_name = {v["submission"]["file_name"]: v for v in table["variants"]}
                assert sorted((by_name["add_out.py"]["rank"], by_name["add_in_place.py"]["rank"])) in ([1, 2], [1, 1])
                assert by_name["add_out.py"]["submission"]["status"] == "passed"
                wrong = by_name["copy_only.py"]
                assert wrong["submission"]["status"] == "failed" and wrong["rank"] is None
                assert steps, "no progress notification arrived"
                assert [p for p, _ in steps] == sorted({p for p, _ in steps}), "progress only grows"
                assert any(m and m.startswith("batch #") for _, m in steps), steps

                chosen = by_name["add_out.py"]["submission"]["id"]
                shown = structured(await session.call_tool("result", {"submission_id": chosen}), logs())
                assert shown["id"] == chosen and shown["status"] == "passed" and shown["owner"] == "ada"
                assert shown["result"]["status"] == "passed" and shown["result"]["timings"]

                board = structured(
                    await session.call_tool("leaderboard", {"slug": "vector_add", "gpu_type": "cpu"}), logs()
                )
                assert board["problem"] == "vector-addition" and board["gpu_type"] == "cpu"

                unknown = await session.call_tool("show", {"slug": "no-such-problem"})
                assert unknown.is_error, text_of(unknown)
                assert "problem_not_found" in text_of(unknown)

                # A call the client gives up on withdraws its submission on the server, as Ctrl-C does in the CLI.
                running = anyio.Event()

                async def on_slow_progress(progress: float, total: float | None, message: str | None) -> None:
                    if message and message.startswith("running on runner"):
                        running.set()

                async def slow_call() -> None:
                    arguments = {"slug": "vector_add", "file_name": "slow.py", "source": SLOW_SOLUTION.decode()}
                    await session.call_tool("submit", arguments | {"mode": "test"}, progress_callback=on_slow_progress)

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(slow_call)
                    with anyio.fail_after(120):
                        await running.wait()
                    tasks.cancel_scope.cancel()

                async def withdrawn() -> bool:
                    row = await pool.fetchrow("SELECT status, error_code FROM submissions WHERE file_name = 'slow.py'")
                    return row is not None and (row["status"], row["error_code"]) == ("failed", "cancelled")

                await wait_until(withdrawn, 60, "the cancelled call's submission was not withdrawn", logs)

                # The server is still up after the refusal and the cancel: the starter comes from the local catalogue.
                starter = structured(await session.call_tool("starter", {"slug": "vector_add", "lang": "cuda"}), logs())
                assert starter["file_name"].endswith(".cu") and "solution" in starter["text"]
    finally:
        fleet.close()
