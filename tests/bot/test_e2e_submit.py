"""Fake Discord → bot → local CPU runner → Postgres: submissions from a user's point of view."""

from __future__ import annotations

import asyncio
import itertools
import os
from datetime import datetime
from pathlib import Path

from tests.bot.harness import GREEN, RED, ROOT, Arena

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def embed_text(embed: dict) -> str:
    """An embed as plain text: title, description, fields, footer (what a reader of the channel sees)."""
    parts = [f"**{embed.get('title', '')}**", embed.get("description", "")]
    parts += [f"{f['name']}: {f['value']}" for f in embed.get("fields", [])]
    if "image" in embed:
        parts.append(f"[image: {embed['image']['url'].rsplit('/', 1)[-1]}]")
    parts.append(f"— {embed.get('footer', {}).get('text', '')}")
    return "\n".join(p for p in parts if p)


async def test_correct_submission_ends_with_the_table_a_chart_and_a_leaderboard_place(arena: Arena) -> None:
    fake = arena.fake
    alice = fake.add_member("alice")
    interaction = await arena.submit_example(alice, "vector_add", "vector_add.py", mode="ranked")

    receipt = await fake.wait_for_original(interaction, lambda m: bool(m.embeds))
    assert receipt.ephemeral and "Got `vector_add.py`" in receipt.embeds[0]["title"]
    assert "queue position 1" in receipt.embeds[0]["description"]

    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert not final.ephemeral and embed["color"] == GREEN
    assert embed["title"].startswith("Submission #1 · vector_add · float32")
    for case in ("n=7", "n=1000", "n=65539"):
        assert case in embed["description"]
    assert "of peak" in embed["description"] and "% BW" in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert float(fields["Geometric mean GFLOPS"].replace(",", "")) > 0
    assert fields["Leaderboard"] == "entered the leaderboard at #1"
    chart = final.file("roofline.png")
    assert chart.startswith(PNG_MAGIC) and embed["image"]["url"] == final.files[0].url

    states = [e["description"].split("\n")[0] for v in final.history for e in v.get("embeds", [])]
    assert states[0].startswith("**⏳ Queued: position 1")
    assert any(s.startswith(("**🚀 Starting", "**🛠️ Compiling")) for s in states), states
    # Events are coalesced: the message changes at most once per progress interval, however the runner's events
    # bunch up. The times are the fake server's, stamped as each edit arrives: on a loaded host one edit can arrive
    # late and the next on time, so two stamps may sit closer than the interval, but over the message's life there
    # is never more than one edit per interval (a busy host only spreads them further apart).
    moments = [datetime.fromisoformat(v["edited_timestamp"] or v["timestamp"]) for v in final.history]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(moments)]
    interval = arena.bot.settings.progress_interval_s
    assert gaps and len(gaps) <= sum(gaps) / (0.98 * interval) + 1, gaps

    announced = await fake.wait_for_message(lambda m: m.channel_id == fake.channel("general").id)
    assert "Alice" in announced.embeds[0]["title"] and "#1" in announced.embeds[0]["description"]

    board = await fake.invoke_slash(alice, "leaderboard", {"problem": "vector_add"})
    shown = await fake.wait_for_original(board, lambda m: bool(m.embeds))
    assert not shown.ephemeral
    assert "Alice" in shown.embeds[0]["description"]
    assert shown.embeds[0]["fields"][0]["value"].startswith("#1 with ")

    if os.environ.get("ARENA_WRITE_DOCS") == "1":
        _write_docs(final.file("roofline.png"), embed_text(embed))


def _write_docs(chart: bytes, text: str) -> None:
    docs = ROOT / "docs"
    (docs / "chart_example.png").write_bytes(chart)
    body = (
        "# An example final embed\n\n"
        "The final message of a ranked Python submission to `vector_add` on the CPU runner, as the fake Discord "
        "received it in `tests/bot/test_e2e_submit.py` (regenerate with `ARENA_WRITE_DOCS=1`). The chart "
        "attached to it is [chart_example.png](chart_example.png).\n\n"
        "````text\n" + text + "\n````\n"
    )
    Path(docs / "embed_example.md").write_text(body, encoding="utf-8")


async def test_wrong_submission_names_the_failing_case_and_its_error_figures(arena: Arena) -> None:
    bob = arena.fake.add_member("bob")
    interaction = await arena.submit_example(bob, "vector_add", "vector_add_wrong.py")
    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert embed["color"] == RED
    assert "wrong answer" in embed["description"] and "n=7" in embed["description"]
    failing = embed["fields"][0]
    assert failing["name"] == "Failing case: n=7"
    assert "max abs error" in failing["value"] and "expected" in failing["value"]
    assert not final.files


async def test_two_users_submitting_at_once_both_get_their_results(arena: Arena) -> None:
    carol, dave = arena.fake.add_member("carol"), arena.fake.add_member("dave")
    first, second = await asyncio.gather(
        arena.submit_example(carol, "vector_add", "vector_add.py", mode="ranked"),
        arena.submit_example(dave, "vector_add", "vector_add.py", mode="ranked"),
    )
    finals = await asyncio.gather(arena.final(first), arena.final(second))
    titles = sorted(f.embeds[0]["title"] for f in finals)
    assert [t.split(" · ")[0] for t in titles] == ["Submission #1", "Submission #2"]
    assert all(f.embeds[0]["color"] == GREEN for f in finals), [f.embeds[0]["description"] for f in finals]
    assert {f.embeds[0]["footer"]["text"].split(" · ")[0] for f in finals} == {"Carol", "Dave"}
    places = sorted(next(x["value"] for x in f.embeds[0]["fields"] if x["name"] == "Leaderboard") for f in finals)
    assert places[0].startswith("entered the leaderboard at #")
    assert await arena.count("leaderboard_entries") == 2 * 2  # each user: a python row and an `any` row


async def test_a_syntax_error_is_shown_in_a_code_block(arena: Arena) -> None:
    source = b"import torch\n\n\ndef solution(a, b, c, n):\n    c.copy_(a + b\n"
    interaction = await arena.submit(arena.fake.add_member("oscar"), "vector_add", "broken.py", source, mode="test")
    embed = (await arena.final(interaction)).embeds[0]
    assert embed["color"] == RED
    assert embed["description"].startswith("❌ **syntax error**: ")
    assert "line 5" in embed["description"] and "```\nc.copy_(a + b" in embed["description"]
