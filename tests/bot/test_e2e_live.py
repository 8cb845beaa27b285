"""The live message past the interaction's edit window, and the rate limit, with a bot configured for both."""

from __future__ import annotations

from typing import Any

import pytest

from bot.settings import RateLimitSettings
from tests.bot.harness import GREEN, Arena, is_final

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    # An edit window of 0 s behaves like a job that outlives its interaction's 15-minute token.
    return {
        "interaction_edit_window_s": 0.0,
        "rate": RateLimitSettings(ranked_burst=1, ranked_per_hour=20, benchmark_burst=100, test_burst=100),
    }


async def test_progress_moves_to_a_channel_message_once_the_interaction_cannot_be_edited(arena: Arena) -> None:
    fake = arena.fake
    nina = fake.add_member("nina")
    interaction = await arena.submit_example(nina, "vector_add", "vector_add.py", mode="ranked")
    final = await fake.wait_for_message(lambda m: m.source == "channel" and is_final(m), timeout=90)
    assert final.channel_id == fake.channel("submissions").id
    assert final.content == f"<@{nina.id}>, your submission continues here:"
    assert final.embeds[0]["color"] == GREEN and final.file("roofline.png")
    assert not interaction.followup_ids

    again = await arena.submit_example(nina, "vector_add", "vector_add.py", mode="ranked")
    refused = await fake.wait_for_original(again, lambda m: bool(m.embeds))
    embed = refused.embeds[0]
    assert (
        refused.ephemeral
        and "You have used your ranked submissions for now (1 at once, 20 an hour)" in (embed["description"])
    )
    assert "Try again in 3 minutes." in embed["description"]
    assert embed["fields"][0]["name"] == "Next submission" and embed["fields"][0]["value"].endswith(":R>")
    assert await arena.count("submissions") == 1
