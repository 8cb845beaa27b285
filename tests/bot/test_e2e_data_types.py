"""An integer problem reads as the data it computes on, in Discord as in the CLI: poly-multiply-ff is stored under
the float32 key but shows uint32 on its card, on its board and on a submission's messages; a float problem shows
its keys unchanged."""

from __future__ import annotations

from tests.bot.harness import ROOT, Arena
from tests.bot.test_e2e_submit import embed_text

POLY_SOLUTION = ROOT / "tests" / "problems" / "solutions" / "crypto" / "poly_multiply_ff.py"


async def test_the_problem_card_and_board_of_a_finite_field_problem_show_uint32(arena: Arena) -> None:
    fake = arena.fake
    ivan = fake.add_member("ivan")

    shown = await fake.invoke_slash(ivan, "problem", {"slug": "poly-multiply-ff"})
    card = (await fake.wait_for_original(shown, lambda m: bool(m.embeds))).embeds[0]
    fields = {f["name"]: f["value"] for f in card["fields"]}
    assert fields["Dtypes"] == "uint32"
    assert "float32" not in embed_text(card), embed_text(card)

    asked = await fake.invoke_slash(ivan, "leaderboard", {"problem": "poly-multiply-ff", "gpu": "cpu"})
    board = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    assert board["title"].startswith("🏆 poly-multiply-ff · cpu · uint32"), board["title"]

    float_card = await fake.invoke_slash(ivan, "problem", {"slug": "gelu"})
    gelu = (await fake.wait_for_original(float_card, lambda m: bool(m.embeds))).embeds[0]
    assert {f["name"]: f["value"] for f in gelu["fields"]}["Dtypes"] == "float32, float16, bfloat16"


async def test_a_submission_to_a_finite_field_problem_is_headed_uint32(arena: Arena) -> None:
    fake = arena.fake
    alice = fake.add_member("alice")
    interaction = await arena.submit(
        alice, "poly-multiply-ff", POLY_SOLUTION.name, POLY_SOLUTION.read_bytes(), mode="test"
    )

    receipt = await fake.wait_for_original(interaction, lambda m: bool(m.embeds))
    assert "**poly-multiply-ff** · uint32 · test" in receipt.embeds[0]["description"], receipt.embeds[0]

    final = await arena.final(interaction)
    titles = [e["title"] for version in final.history for e in version.get("embeds", [])]
    assert titles and all(t.startswith("Submission #1 · poly-multiply-ff · uint32") for t in titles), titles
