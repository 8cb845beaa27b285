"""A ranked run says in Discord what it counts for: fake Discord → bot → local CPU runner → Postgres, on the real
clock. The receipt warns a run made before a contest's start that it counts for nothing there, and the result
embed says which contest counts it, or why none does."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

from tests.bot.harness import JOB_TIMEOUT_S, Arena
from tests.fakediscord import InteractionRecord, RecordedMessage


def text_of(message: RecordedMessage) -> str:
    embed = message.embeds[0]
    parts = [embed.get("title", ""), embed.get("description", "")]
    parts += [f"{f['name']}: {f['value']}" for f in embed.get("fields", [])]
    return "\n".join(parts)


async def receipt_of(arena: Arena, interaction: InteractionRecord) -> str:
    message = await arena.fake.wait_for_original(interaction, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)
    return text_of(message)


async def test_the_receipt_and_the_result_say_what_a_ranked_run_counts_for(arena: Arena) -> None:
    fake, mod = arena.fake, arena.moderator
    alice = fake.add_member("alice")
    options = {"problems": "vector_add", "gpus": "cpu", "dtypes": "float32", "end": "in 1h"}
    for slug, start in (("later", "in 50m"), ("soon", "in 10s")):
        created = await fake.invoke_slash(
            mod, "mod contest create", {"slug": slug, "title": slug, "start": start, **options}
        )
        assert f"Contest `{slug}` created" in await receipt_of(arena, created)
    starts_at = await arena.bot.pool.fetchval("SELECT starts_at FROM contests WHERE slug = 'soon'")

    # Before either start: the receipt says so at once, and so does the result.
    early = await arena.submit_example(alice, "vector_add", "vector_add.py", mode="ranked")
    receipt = await receipt_of(arena, early)
    assert "⚠️ this run counts for no contest: `soon` starts in " in receipt, receipt
    assert re.search(r"; `later` starts in (49|50) min \(", receipt), receipt  # as the clock reads it
    final = text_of(await arena.final(early))
    assert "Contests: this run counts for no contest: " in final, final
    # Judged before or after the start, as the machine's pace has it: the same reason either way.
    assert "`soon` starts in " in final or "before `soon` started" in final, final

    # After the first start: the receipt has nothing to warn about, and the result names the contest.
    await asyncio.sleep(max(0.0, (starts_at - datetime.now(UTC)).total_seconds()) + 0.2)
    counted = await arena.submit_example(alice, "vector_add", "vector_add.py", mode="ranked")
    assert "⚠️" not in await receipt_of(arena, counted)
    final = text_of(await arena.final(counted))
    if "❌" in final:  # a verdict of the machine (a busy host) rather than of the run: it ranks nowhere
        assert "Contests: this run counts for no contest: `soon` ranks only runs that pass" in final, final
    else:
        assert "Contests: counts for contest `soon`; `later` starts in " in final, final

    # A practice run is not asked about.
    practice = await arena.submit_example(alice, "vector_add", "vector_add.py", mode="benchmark")
    assert "Contests" not in text_of(await arena.final(practice))
