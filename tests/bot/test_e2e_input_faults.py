"""Through Discord: a problem name holding NUL gets a clear private refusal (PostgreSQL cannot store NUL in
text, which once surfaced as "something went wrong"), and a source saved with a byte-order mark runs."""

from __future__ import annotations

from tests.bot.harness import GREEN, Arena

CORRECT = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
BOM = b"\xef\xbb\xbf"


async def test_a_problem_name_with_nul_is_refused_privately_and_nothing_is_stored(arena: Arena) -> None:
    frank = arena.fake.add_member("frank")
    interaction = await arena.submit(frank, "vector\x00add", "s.py", CORRECT)
    message = await arena.error_of(interaction)
    assert "is not a problem name: it holds control characters" in message, message
    assert "\x00" not in message
    assert "went wrong" not in message
    assert await arena.count("submissions") == 0


async def test_a_python_source_with_a_byte_order_mark_passes(arena: Arena) -> None:
    grace = arena.fake.add_member("grace")
    interaction = await arena.submit(grace, "vector_add", "bom.py", BOM + CORRECT, mode="test")
    final = await arena.final(interaction)
    assert final.embeds[0]["color"] == GREEN, final.summary()
