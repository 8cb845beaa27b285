"""The bot with a fleet runner: a real runner daemon on 127.0.0.1 (CPU slot, real sandboxed workers) that joined
the `cpu` pool, reached over the signed HTTP API with the secret its join returned; no local runner."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.bot.fleet_member import FleetMember, TestFleet, daemon_hardware, daemon_settings, serve_daemon
from tests.bot.harness import DATA, GREEN, JOB_TIMEOUT_S, Arena


@pytest.fixture
async def cpu_daemon(fleet: TestFleet) -> AsyncIterator[FleetMember]:
    member = await fleet.join("cpu-daemon", "cpu")
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        async with serve_daemon(daemon_settings(Path(state), "cpu-daemon"), member.secret) as daemon:
            await member.register(daemon.url, await daemon_hardware(daemon.app))
            yield member


@pytest.fixture
def bot_overrides(cpu_daemon: FleetMember) -> dict[str, Any]:
    return {"fleet": "on", "local_runner": "off"}


async def test_a_submission_runs_on_the_runner_daemon(arena: Arena) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert embed["color"] == GREEN and embed["description"] == "✅ All 3 test cases passed."
    assert embed["footer"]["text"].startswith("Rita · vector_add.py · python · test · cpu · CPU")
    row = await arena.bot.pool.fetchrow("SELECT runner, status FROM submissions WHERE id = 1")
    assert dict(row) == {"runner": "cpu-daemon", "status": "passed"}

    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    status = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]["fields"][0]
    assert status["name"] == "cpu-daemon"
    assert "GPU type `cpu` · pool · active · 1 slot(s)" in status["value"], status["value"]
    assert "✅ ok" in status["value"] and "free slots 1/1" in status["value"], status["value"]


async def test_the_runner_daemon_runs_the_admission_self_test(arena: Arena) -> None:
    module = (DATA / "vector_sub.py").read_bytes()
    added = await arena.fake.invoke_slash(arena.moderator, "mod problem-add", attachments=[("vector_sub.py", module)])
    report = await arena.fake.wait_for_original(added, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)
    assert report.embeds[0]["title"] == "Admission self-test of `vector_sub`: ✅ passed"
    assert "Ran on `cpu-daemon`" in report.embeds[0]["description"]
