"""A contest from a moderator's `/mod contest create` to its podium, ratings, code reveal and upsolve board:
fake Discord → bot → local CPU runner → Postgres, on the real clock (the contest is shortened with
`/mod contest edit` instead of waiting out its minute)."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.bot.harness import JOB_TIMEOUT_S, RED, Arena
from tests.fakediscord import FakeUser, InteractionRecord, RecordedMessage


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    return {"contest_freeze_interval_s": 0.3}


def text_of(message: RecordedMessage) -> str:
    embed = message.embeds[0]
    parts = [embed.get("title", ""), embed.get("description", "")]
    parts += [f"{f['name']}: {f['value']}" for f in embed.get("fields", [])]
    return "\n".join(parts)


async def shown(arena: Arena, interaction: InteractionRecord) -> RecordedMessage:
    return await arena.fake.wait_for_original(interaction, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)


async def ask(arena: Arena, user: FakeUser, command: str, options: dict[str, Any] | None = None) -> str:
    return text_of(await shown(arena, await arena.fake.invoke_slash(user, command, options or {})))


async def submitted(arena: Arena, user: FakeUser) -> tuple[int, InteractionRecord]:
    """`user` sends a ranked vector_add run; its submission id once accepted (the submission's creation time)."""
    interaction = await arena.submit_example(user, "vector_add", "vector_add.py", mode="ranked")
    receipt = await shown(arena, interaction)
    found = re.search(r"Submission \*\*#(\d+)\*\*", receipt.embeds[0]["description"])
    assert found, receipt.embeds
    return int(found.group(1)), interaction


async def sleep_until(when: datetime) -> None:
    await asyncio.sleep(max(0.0, (when - datetime.now(UTC)).total_seconds()) + 0.2)


async def contest_window(arena: Arena, slug: str) -> tuple[datetime, datetime]:
    row = await arena.bot.pool.fetchrow("SELECT starts_at, ends_at FROM contests WHERE slug = $1", slug)
    return row["starts_at"], row["ends_at"]


async def created_at(arena: Arena, submission_id: int) -> datetime:
    return await arena.bot.pool.fetchval("SELECT created_at FROM submissions WHERE id = $1", submission_id)


async def test_a_contest_freezes_announces_its_podium_rates_reveals_code_and_takes_upsolve_runs(arena: Arena) -> None:
    fake, mod = arena.fake, arena.moderator
    alice, bob, carol = fake.add_member("alice"), fake.add_member("bob"), fake.add_member("carol")

    created = await ask(
        arena, mod, "mod contest create",
        {"slug": "sprint", "title": "Sprint", "problems": "vector_add", "start": "in 6s", "end": "in 1m",
         "gpus": "cpu", "dtypes": "float32"},
    )  # fmt: skip
    assert "Contest `sprint` created: Sprint" in created and "⏳ scheduled" in created
    assert re.search(r"Start <t:\d+:F> \(<t:\d+:R>\)", created), created
    starts_at, _ = await contest_window(arena, "sprint")

    early, early_run = await submitted(arena, alice)  # before the start: on neither board
    assert await created_at(arena, early) < starts_at
    await sleep_until(starts_at)
    alice_run, alice_live = await submitted(arena, alice)
    bob_run, bob_live = await submitted(arena, bob)
    assert "🟢 running" in await ask(arena, alice, "contest", {"slug": "sprint"})

    # Before the end nobody else reads contest code.
    hidden = await fake.invoke_slash(alice, "submission", {"id": bob_run})
    assert f"You have no submission #{bob_run}" in await arena.error_of(hidden)

    # The moderator shortens the contest rather than the test waiting out its minute.
    edited = await ask(arena, mod, "mod contest edit", {"slug": "sprint", "end": "in 2s", "reason": "test"})
    assert "Contest `sprint` changed" in edited
    _, ends_at = await contest_window(arena, "sprint")
    for live in (early_run, alice_live, bob_live):
        await arena.final(live)

    general = fake.channel("general").id
    announced = await fake.wait_for_message(
        lambda m: m.channel_id == general and bool(m.embeds) and "is over" in m.embeds[0].get("title", ""),
        timeout=JOB_TIMEOUT_S,
    )
    announcement = text_of(announced)
    assert "🏆 Sprint is over" in announcement and "2 entrant(s)" in announcement
    assert "Alice" in announcement and "Bob" in announcement and "/reveal off" in announcement
    assert f"runs #{alice_run}" in announcement and f"#{early}," not in announcement
    assert re.search(r"Alice: 1500 → \d+ \([+-]\d+\)", announcement), announcement
    assert re.search(r"Bob: 1500 → \d+ \([+-]\d+\)", announcement), announcement

    board = await ask(arena, carol, "contest", {"slug": "sprint"})
    assert "final board" in board and "🧊 frozen" in board and "Rank-sum scoring" in board
    assert "Podium: 🥇" in board and "🥈" in board

    rating = await ask(arena, alice, "rating")
    assert "Rating of Alice" in rating and "conservative" in rating and "1 contest(s)" in rating
    assert re.search(r"`sprint` Sprint · place [12] · 1500 → \d+ \([+-]\d+\)", rating), rating
    table = await ask(arena, carol, "ratings")
    assert "Ratings · 2 rated" in table and "Alice" in table and "Bob" in table
    assert "Not rated yet" in await ask(arena, carol, "rating", {"user": carol})

    # After the end, contest code is readable by others; an author who opts out hides theirs again.
    revealed = await shown(arena, await fake.invoke_slash(alice, "submission", {"id": bob_run}))
    assert b"def solution" in revealed.file("vector_add.py")
    assert "Only you and moderators" in await ask(arena, alice, "reveal", {"code": "off"})
    opted_out = await fake.invoke_slash(bob, "submission", {"id": alice_run})
    assert f"You have no submission #{alice_run}" in await arena.error_of(opted_out)

    # A run after the end goes to the upsolve board, never the frozen one.
    assert datetime.now(UTC) >= ends_at
    late_run, late_live = await submitted(arena, carol)
    await arena.final(late_live)
    upsolve = await ask(arena, carol, "contest", {"slug": "sprint", "phase": "upsolve"})
    assert "upsolve board" in upsolve and "Carol" in upsolve and "Alice" not in upsolve
    assert "Carol" not in await ask(arena, carol, "contest", {"slug": "sprint"})
    assert late_run > bob_run


async def test_contests_lists_a_cancelled_contest_and_refusals_say_what_to_fix(arena: Arena) -> None:
    fake, mod = arena.fake, arena.moderator
    options = {"slug": "later", "title": "Later", "problems": "vector_add", "start": "in 1h", "end": "in 3h"}
    assert "created" in await ask(arena, mod, "mod contest create", options)
    cancelled = await ask(arena, mod, "mod contest cancel", {"slug": "later", "reason": "clash"})
    assert "🚫 cancelled" in cancelled
    listed = await ask(arena, fake.add_member("dora"), "contests")
    assert "~~Later~~ · later" in listed and "🚫 cancelled" in listed

    closed = {**options, "slug": "club", "title": "Club night", "visibility": "invite_only", "reserve_share": 0.25}
    saved = await ask(arena, mod, "mod contest create", closed)
    assert "Entry: invite-only" in saved and "Reserves 25% of its pools for its ranked runs" in saved
    unreserved = await ask(arena, mod, "mod contest edit", {"slug": "club", "reserve_share": 0.0})
    assert "Reserves" not in unreserved
    frank, gina = fake.add_member("frank"), fake.add_member("gina")
    invited = {"slug": "club", "user": frank, "user2": gina}
    assert "(2 new, 0 invited before)" in await ask(arena, mod, "mod contest invite", invited)
    assert "(0 new, 2 invited before)" in await ask(arena, mod, "mod contest invite", invited)
    public = await fake.invoke_slash(mod, "mod contest invite", {"slug": "sprint-none", "user": frank})
    assert "There is no contest called `sprint-none`" in await arena.error_of(public)
    choices = await fake.autocomplete(frank, "contest", "slug", "")
    assert [c["value"] for c in choices] == ["club"]  # the cancelled one is not suggested

    naive = await fake.invoke_slash(mod, "mod contest create", {**options, "slug": "x", "start": "2030-01-01T10:00"})
    assert "has no time zone; add `Z` for UTC" in await arena.error_of(naive)
    past = await fake.invoke_slash(mod, "mod contest create", {**options, "slug": "y", "start": "2000-01-01T10:00Z"})
    assert "has passed" in await arena.error_of(past)
    lone = await fake.invoke_slash(mod, "mod contest edit", {"slug": "later", "gpus": "cpu"})
    assert "Give both `gpus` and `dtypes`" in await arena.error_of(lone)
    unknown = await fake.invoke_slash(mod, "contest", {"slug": "nope"})
    private = await fake.wait_for_followup(unknown, lambda m: bool(m.embeds))  # the public "thinking…" is deleted
    assert private.ephemeral and "`/contests` lists them" in private.embeds[0]["description"]

    someone = fake.add_member("eve")
    refused = await fake.invoke_slash(someone, "mod contest create", {**options, "slug": "z"})
    reply = await fake.wait_for_original(refused, lambda m: bool(m.embeds))
    assert reply.embeds[0]["color"] == RED and "Only moderators" in reply.embeds[0]["description"]
