"""`/mod contest create` checks a contest's targets (fake Discord → bot → Postgres, the bot's runner a local CPU one):
an unknown GPU type and a dtype the problems do not take are refused, and a GPU type no runner serves is warned
about, in the moderator's receipt and again by the contest clock before the start, once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bot.harness import JOB_TIMEOUT_S, Arena
from tests.bot.test_e2e_contest import ask, text_of


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    return {"contest_freeze_interval_s": 0.3}


async def test_targets_are_checked_and_a_gpu_without_a_runner_is_warned_about_on_creation_and_before_the_start(
    arena: Arena,
) -> None:
    fake, mod = arena.fake, arena.moderator
    # Within the contest clock's lead: its next tick looks at both contests.
    window = {"problems": "vector_add", "start": "in 30m", "end": "in 2h", "dtypes": "float32"}

    unknown = await fake.invoke_slash(
        mod, "mod contest create", {**window, "slug": "cup", "title": "Cup", "gpus": "h1000"}
    )
    refusal = await arena.error_of(unknown)
    assert "`h1000` is not a GPU type the arena knows; choose among" in refusal, refusal
    assert "`cpu`" in refusal and "Did you mean `h100`" in refusal
    no_dtype = await fake.invoke_slash(
        mod,
        "mod contest create",
        {**window, "slug": "cup", "title": "Cup", "gpus": "cpu", "problems": "vector_add,cumsum", "dtypes": "float16"},
    )
    assert "`cumsum` does not take float16" in await arena.error_of(no_dtype)
    assert await arena.bot.pool.fetchval("SELECT count(*) FROM contests") == 0

    served = await ask(arena, mod, "mod contest create", {**window, "slug": "local", "title": "Local", "gpus": "cpu"})
    assert "Contest `local` created" in served and "Not enterable yet" not in served
    unserved = await ask(
        arena, mod, "mod contest create", {**window, "slug": "cup", "title": "Cup", "gpus": "cpu, h100"}
    )
    assert "Contest `cup` created" in unserved
    assert "Not enterable yet: No runner serves `h100`: nobody can enter `cup` there until one does." in unserved
    assert "Runners serve `cpu`" in unserved

    general = fake.channel("general").id
    notice = await fake.wait_for_message(
        lambda m: m.channel_id == general and bool(m.embeds) and "no runner for" in m.embeds[0].get("title", ""),
        timeout=JOB_TIMEOUT_S,
    )
    text = text_of(notice)
    assert "⚠️ Cup: no runner for h100" in text and "No runner serves `h100`" in text
    claimed = dict(await arena.bot.pool.fetch("SELECT slug, start_warning_at IS NOT NULL FROM contests"))
    # The served contest was looked at in the same tick and left unclaimed: nothing to warn about.
    assert claimed == {"cup": True, "local": False}
