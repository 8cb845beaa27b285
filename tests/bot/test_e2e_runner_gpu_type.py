"""A runner whose hardware is not its pool's is refused when it registers, and gets no job; the runner that matches
is used.

One real runner daemon on this host's CPU (real sandboxed workers) joins twice: as `cpu-daemon` in the `cpu` pool
(what it is) and as `h100-box` in the `h100` pool (which it is not), reporting the hardware its own probe finds
both times. The pool check refuses `h100-box`; the bot's real dispatcher, store and fleet view decide where jobs
go. A job for `h100` waits in its pool's queue until a runner that is an H100 (a double standing in for one)
joins, and runs there.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.fleet import PoolMismatchError
from runner.gpus import GPU_MODELS
from tests.bot.fleet_member import (
    FleetMember,
    ServedDaemon,
    TestFleet,
    daemon_hardware,
    daemon_settings,
    gpu_hardware,
    serve_daemon,
)
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import RecordedMessage
from tests.store.faults import RunnerDouble

pytestmark = pytest.mark.timeout(300)

H100 = next(m for m in GPU_MODELS if m.key == "h100")


@pytest.fixture
async def cpu_daemon(fleet: TestFleet) -> AsyncIterator[tuple[FleetMember, ServedDaemon]]:
    await fleet.token("h100")  # both pools exist before the bot starts: it takes submissions for either
    member = await fleet.join("cpu-daemon", "cpu")
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        async with serve_daemon(daemon_settings(Path(state), "cpu-daemon"), member.secret) as daemon:
            await member.register(daemon.url, await daemon_hardware(daemon.app))
            yield member, daemon


@pytest.fixture
def bot_overrides(cpu_daemon: tuple[FleetMember, ServedDaemon]) -> dict[str, Any]:
    return {"fleet": "on", "local_runner": "off"}


def shows(text: str) -> Any:
    def predicate(message: RecordedMessage) -> bool:
        return bool(message.embeds) and text in str(message.embeds[0].get("description", ""))

    return predicate


async def test_a_runner_reporting_another_gpu_than_its_pool_is_refused_and_the_matching_one_runs_the_job(
    arena: Arena, fleet: TestFleet, cpu_daemon: tuple[FleetMember, ServedDaemon]
) -> None:
    fake = arena.fake
    _, daemon = cpu_daemon
    # The same CPU daemon, joining the h100 pool: its own probe says it has no GPU, and the pool refuses it.
    impostor = await fleet.join("h100-box", "h100")
    with pytest.raises(PoolMismatchError, match=r"cannot join pool `h100`: it has no GPU, and the pool is `h100`"):
        await impostor.register(daemon.url, await daemon_hardware(daemon.app))
    state = await arena.bot.pool.fetchval("SELECT state FROM runners WHERE name = 'h100-box'")
    assert state == "refused"

    rita = fake.add_member("rita")
    on_cpu = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test", gpu="cpu")
    assert (await arena.final(on_cpu)).embeds[0]["color"] == GREEN
    on_h100 = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test", gpu="h100")
    # Nothing of the h100 pool takes jobs: the job waits in its queue, and no runner is sent it.
    await fake.wait_for_followup(on_h100, shows("Queued: position 1"), timeout=120)

    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    embed = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "GPU type `h100` · pool · refused" in fields["h100-box"], fields
    assert "⛔ refused, no job goes to it: it has no GPU, and the pool is `h100`" in fields["h100-box"], fields
    assert "unreachable" not in fields["h100-box"], fields
    assert "GPU type `cpu` · pool · active" in fields["cpu-daemon"] and "refused" not in fields["cpu-daemon"]
    job = await arena.bot.pool.fetchrow("SELECT state, runner, attempts FROM jobs WHERE submission_id = 2")
    assert dict(job) == {"state": "queued", "runner": None, "attempts": 0}

    # An H100 host joins its pool: the pool check passes, and the waiting job runs there.
    h100 = await fleet.join("h100-real", "h100")
    double = RunnerDouble(h100.secret)
    await double.start()
    try:
        await h100.register(double.url, gpu_hardware(H100, slots=1))
        assert (await arena.final(on_h100)).embeds[0]["color"] == GREEN
    finally:
        await double.stop()
    assert double.posts == ["job-2"]

    rows = await arena.bot.pool.fetch(
        "SELECT s.gpu_type, s.runner, s.status, j.attempts FROM submissions s JOIN jobs j ON j.submission_id = s.id "
        "ORDER BY s.id"
    )
    assert [dict(r) for r in rows] == [
        {"gpu_type": "cpu", "runner": "cpu-daemon", "status": "passed", "attempts": 1},
        {"gpu_type": "h100", "runner": "h100-real", "status": "passed", "attempts": 1},
    ]
