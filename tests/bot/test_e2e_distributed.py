"""A distributed problem through the bot: `/submit all-gather … ranks:2` queues the job in the pool's rank pool
(`cpux2`), the bot's real dispatcher sends it to a real runner daemon on 127.0.0.1 that joined the `cpu` pool with a
slot of 2 ranks (gloo processes, real sandboxed workers), and the result lands on the 2-rank board, which
`/leaderboard … ranks:2` shows with its world size. A world size the problem does not take is refused privately,
saying which to give, and nothing is stored."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.fleet_member import FleetMember, TestFleet, daemon_hardware, daemon_settings, serve_daemon
from tests.bot.harness import GREEN, Arena

pytestmark = pytest.mark.timeout(600)

EXAMPLE = "distributed/all_gather.py"


@pytest.fixture
async def rank_daemon(fleet: TestFleet) -> AsyncIterator[FleetMember]:
    member = await fleet.join("ranks", "cpu")
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        settings = daemon_settings(Path(state), "ranks", rank_slots=[2])
        async with serve_daemon(settings, member.secret) as daemon:
            await member.register(daemon.url, await daemon_hardware(daemon.app))
            yield member


@pytest.fixture
def bot_overrides(rank_daemon: FleetMember) -> dict[str, Any]:
    return {"fleet": "on", "local_runner": "off"}


async def test_a_distributed_submission_runs_on_a_rank_slot_and_lands_on_its_world_sizes_board(arena: Arena) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    # The bot registered the distributed problems as it started: autocomplete offers them.
    offered = [c["value"] for c in await fake.autocomplete(rita, "submit", "problem", "all-")]
    assert "all-gather" in offered and "all-reduce" in offered, offered

    ranked = await arena.submit_example(rita, "all-gather", EXAMPLE, mode="ranked", ranks=2)
    embed = (await arena.final(ranked)).embeds[0]
    assert embed["color"] == GREEN, embed
    assert embed["footer"]["text"].startswith("Rita · all_gather.py · python · ranked · cpux2 · 2 ranks"), embed
    row = await arena.bot.pool.fetchrow("SELECT runner, status, gpu_type, world_size FROM submissions WHERE id = 1")
    assert dict(row) == {"runner": "ranks/x2", "status": "passed", "gpu_type": "cpux2", "world_size": 2}

    asked = await fake.invoke_slash(rita, "leaderboard", {"problem": "all-gather", "ranks": 2})
    board = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    assert board["title"] == "🏆 all-gather · cpux2 · 2 ranks · float32 · cpu timing", board
    assert "Rita" in board["description"] and board["fields"][0]["value"].startswith("#1 with "), board

    # The same runner's one-device slot still takes a one-device problem, with no GPU type named: its rank pool is
    # reached through `ranks`, not offered as a GPU type of its own.
    single = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    assert (await arena.final(single)).embeds[0]["color"] == GREEN
    assert await arena.bot.pool.fetchval("SELECT gpu_type FROM submissions WHERE id = 2") == "cpu"


async def test_a_world_size_the_problem_does_not_take_is_refused_saying_which_to_give(arena: Arena) -> None:
    fake = arena.fake
    sam = fake.add_member("sam")
    wrong = await arena.submit_example(sam, "all-gather", EXAMPLE, mode="test", ranks=3)
    message = await arena.error_of(wrong)
    assert "`all-gather` is a distributed problem for 2, 4, 8 ranks" in message, message
    assert "choose a world size of 2, 4, 8" in message, message
    one_device = await arena.submit_example(sam, "vector_add", "vector_add.py", mode="test", ranks=2)
    assert "runs on one device; leave the world size out" in await arena.error_of(one_device)
    assert not wrong.followup_ids and not one_device.followup_ids
    assert await arena.count("submissions") == 0
