"""The live message past the interaction's edit window, and the rate limit, with a bot configured for both."""

from __future__ import annotations

import math
import re
import time
from typing import Any

import pytest

from core.settings import RateLimitSettings
from tests.bot.harness import GREEN, JOB_TIMEOUT_S, Arena, is_final


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    # An edit window of 0 s behaves like a job that outlives its interaction's 15-minute token.
    return {
        "interaction_edit_window_s": 0.0,
        # One an hour: however long the first job takes on a busy host, the bucket is still empty for the second.
        "rate": RateLimitSettings(ranked_burst=1, ranked_per_hour=1, benchmark_burst=100, test_burst=100),
    }


async def test_progress_moves_to_a_channel_message_once_the_interaction_cannot_be_edited(arena: Arena) -> None:
    fake = arena.fake
    nina = fake.add_member("nina")
    interaction = await arena.submit_example(nina, "vector_add", "vector_add.py", mode="ranked")
    final = await fake.wait_for_message(lambda m: m.source == "channel" and is_final(m), timeout=JOB_TIMEOUT_S)
    assert final.channel_id == fake.channel("submissions").id
    assert final.content == f"<@{nina.id}>, your submission continues here:"
    assert final.embeds[0]["color"] == GREEN and final.file("roofline.png")
    assert not interaction.followup_ids

    before = time.time()
    again = await arena.submit_example(nina, "vector_add", "vector_add.py", mode="ranked")
    refused = await fake.wait_for_original(again, lambda m: bool(m.embeds))
    after = time.time()
    embed = refused.embeds[0]
    assert (
        refused.ephemeral
        and "You have used your ranked submissions for now (1 at once, 1 an hour)" in (embed["description"])
    )
    assert embed["fields"][0]["name"] == "Next submission"
    stamp = re.fullmatch(r"<t:(\d+):R>", embed["fields"][0]["value"])
    said = re.search(r"Try again in (\d+) minutes\.", embed["description"])
    assert stamp is not None and said is not None, embed
    # The wait is an hour less the time since the first submission (how long its job ran, which a busy host
    # stretches), said in whole minutes rounded up, and it agrees with the timestamp beside it.
    latest, earliest = int(stamp[1]) - before, int(stamp[1]) - 1 - after
    assert math.ceil(earliest / 60) <= int(said[1]) <= math.ceil(latest / 60), (said[0], earliest, latest)
    assert int(said[1]) <= 60
    assert await arena.count("submissions") == 1
