"""Submissions the bot refuses: each gets a private message that says what to do, and nothing is stored."""

from __future__ import annotations

from tests.bot.harness import Arena

CORRECT = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"


async def test_bad_uploads_unknown_problems_and_missing_runners_are_refused_privately(arena: Arena) -> None:
    fake = arena.fake
    frank = fake.add_member("frank")
    disabled = await fake.invoke_slash(arena.moderator, "mod problem-disable", {"slug": "softmax"})
    assert "closed" in (await fake.wait_for_original(disabled, lambda m: bool(m.embeds))).embeds[0]["description"]
    cases = [
        (("notes.txt", b"hello"), {}, "`notes.txt` is not a .cu or .py file"),
        (("big.py", b"#" * (10 * 1024 * 1024)), {}, "`big.py` is 10,240 KiB; the limit is 256 KiB"),
        (("latin1.py", b"# caf\xe9\n" + CORRECT), {}, "`latin1.py` is not UTF-8 text"),
        (("blank.py", b"\n\n"), {}, "`blank.py` is empty"),
        (("s.py", CORRECT), {"problem": "vector_ad"}, "no problem called `vector_ad`. Did you mean `vector-addition`"),
        (("s.py", CORRECT), {"problem": "softmax"}, "`softmax` is closed for submissions"),
        (("s.py", CORRECT), {"gpu": "h100"}, "No runner serves `h100` right now; choose one of `cpu`"),
        (("s.py", CORRECT), {"dtype": "bfloat16", "problem": "prefix_sum"}, "`cumsum` does not take bfloat16"),
    ]
    for (name, data), options, expected in cases:
        options = {"problem": "vector_add", **options}
        interaction = await fake.invoke_slash(frank, "submit", options, attachments=[(name, data)])
        message = await arena.error_of(interaction)
        assert expected in message, (name, message)
        assert not interaction.followup_ids
    assert await arena.count("submissions") == 0


async def test_a_banned_user_is_refused_and_only_moderators_can_ban(arena: Arena) -> None:
    fake = arena.fake
    eve, mallory = fake.add_member("eve"), fake.add_member("mallory")

    attempt = await fake.invoke_slash(mallory, "mod ban", {"user": eve, "reason": "spam"})
    assert "Only moderators" in await arena.error_of(attempt)

    banned = await fake.invoke_slash(arena.moderator, "mod ban", {"user": eve, "reason": "copied solutions"})
    notice = await fake.wait_for_original(banned, lambda m: bool(m.embeds))
    assert notice.ephemeral and "is banned" in notice.embeds[0]["description"]

    refused = await arena.submit(eve, "vector_add", "s.py", CORRECT)
    assert "You are banned from submitting" in await arena.error_of(refused)
    assert await arena.count("submissions") == 0

    lifted = await fake.invoke_slash(arena.moderator, "mod unban", {"user": eve})
    assert (
        "may submit again" in (await fake.wait_for_original(lifted, lambda m: bool(m.embeds))).embeds[0]["description"]
    )
