"""`/submit mode:profile` for real: fake Discord → bot → local GPU runner under Nsight Compute → Postgres.

The bot runs with its local runner on this machine's GPU. A user profiles the naive CUDA matmul; the public message
must carry the kernel's row (time, throughput, occupancy, launch shape, stalls, DRAM bytes, FLOPs beside the
formula), the roofline chart drawn from the measured point, and the report's files. No leaderboard row is written.
Where this runner may not profile, the user must get the runner's reason, and nothing else.

With ARENA_EVIDENCE_DIR set, the message (as a reader sees it) and its files are written there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from runner.host.executor import default_executor
from runner.profiling.availability import jobs_run_as_root, profiling_support
from tests.bot.harness import GREEN, RED, Arena
from tests.bot.test_e2e_submit import PNG_MAGIC, embed_text

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(900)]


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    return {"local_device": "gpu", "local_slots": 1, "local_measure": None, "device_specs": {}}


async def _refusal() -> str | None:
    executor = await default_executor(timeout_s=60)
    support = profiling_support(True, jobs_run_as_root(executor.sandbox.policy.uid_base))
    return None if support.available else support.note


async def test_a_profile_through_the_bot_shows_the_kernels_counters_chart_and_files(arena: Arena) -> None:
    ada = arena.fake.add_member("ada")
    interaction = await arena.submit_example(ada, "matrix-multiplication", "matmul_naive.cu", mode="profile")
    refusal = await _refusal()
    if refusal is not None:
        refused = (await arena.final(interaction, timeout=900)).embeds[0]
        assert refused["color"] == RED and refusal[:60] in refused["description"], refused
        return
    final = await arena.final(interaction, timeout=900)
    embed = final.embeds[0]
    text = embed_text(embed)
    _write_evidence(text, final.files)
    assert embed["color"] == GREEN, text
    assert embed["title"].startswith("🔬 Submission #1 · matrix-multiplication · float32"), text
    (kernel,) = [f for f in embed["fields"] if f["name"].startswith("#")]
    assert kernel["name"] == "#1 `matmul_kernel`"
    first = kernel["value"].splitlines()[0]
    assert first.startswith("time ") and "SM throughput" in first and "mem throughput" in first, kernel
    for figure in ("occupancy", "regs", "block 16×16×1", "DRAM read / written"):
        assert figure in kernel["value"], (figure, text)
    assert "**FLOP**" in embed["description"] and "(1.00×)" in embed["description"], text
    assert "**top stall**" in embed["description"], text
    assert final.file("roofline.png").startswith(PNG_MAGIC)
    assert embed["image"]["url"].endswith("roofline.png")
    names = [f.filename for f in final.files]
    assert {"profile.txt", "solution.sass", "solution.ptx"} <= set(names), names
    assert b"matmul_kernel" in final.file("solution.sass")
    assert await arena.count("leaderboard_entries") == 0


def _write_evidence(text: str, files: list[Any]) -> None:
    folder = os.environ.get("ARENA_EVIDENCE_DIR")
    if not folder:
        return
    target = Path(folder) / "bot-profile"
    target.mkdir(parents=True, exist_ok=True)
    (target / "message.txt").write_text(text + "\n", encoding="utf-8")
    for stored in files:
        (target / Path(stored.filename).name).write_bytes(stored.data)
