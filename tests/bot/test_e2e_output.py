"""Fake Discord → bot → local CPU runner → Postgres: what the solution printed comes after the result, in the
public message, as a code block, or as `output.txt` when it is long; `/submission` shows it again from the store."""

from __future__ import annotations

from tests.bot.harness import GREEN, RED, Arena

PRINTS = b"""
import torch


def solution(a, b, out, n):
    print(f"adding {n} elements")
    torch.add(a, b, out=out)
"""

PRINTS_A_LOT_THEN_FAILS = b"""
def solution(a, b, out, n):
    print("row " * 5000)
    out.copy_(a)
"""


def _fields(embed: dict) -> dict[str, str]:
    return {f["name"]: f["value"] for f in embed.get("fields", [])}


async def test_the_printed_lines_come_after_the_result_and_again_from_the_store(arena: Arena) -> None:
    alice = arena.fake.add_member("alice")
    interaction = await arena.submit(alice, "vector_add", "printer.py", PRINTS, mode="test")
    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert embed["color"] == GREEN
    value = _fields(embed)["What the solution printed"]
    assert value.startswith("```\n--- stdout during the correctness tests ---\nadding ")

    detail = await arena.fake.invoke_slash(alice, "submission", {"id": 1})
    shown = await arena.fake.wait_for_original(detail, lambda m: bool(m.embeds))
    assert _fields(shown.embeds[0])["What the solution printed"] == value


async def test_a_long_output_before_a_wrong_answer_is_attached(arena: Arena) -> None:
    bob = arena.fake.add_member("bob")
    interaction = await arena.submit(bob, "vector_add", "loud.py", PRINTS_A_LOT_THEN_FAILS, mode="test")
    final = await arena.final(interaction)
    assert final.embeds[0]["color"] == RED
    assert "attached as output.txt" in _fields(final.embeds[0])["What the solution printed"]
    attached = final.file("output.txt").decode("utf-8")
    assert attached.startswith("--- stdout during the correctness tests ---\nrow row")
    assert "more bytes cut" in attached
