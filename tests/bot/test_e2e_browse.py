"""Browsing from Discord: problems, starters, paginated leaderboards, a submission's result and code, stats.

Ranked results here are recorded through the store's real path (claim the job, record under its lease) with
made-up scores, as the store tests do, so that a board of 25 users costs no worker processes. They go to the
GPU type `h100`, which has no runner here, so that the bot's dispatcher leaves their jobs to the helper.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.ui.views import ArenaView
from core.submit.intake import submit
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import FakeUser
from tests.fakediscord.models import walk_components
from tests.store.store_helpers import add_problems, request, submit_scored


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    # Buttons outlive any stall of a busy host between two presses; the timeout has its own test below.
    return {"view_timeout_s": 600.0}


async def test_problems_problem_and_starter(arena: Arena) -> None:
    fake = arena.fake
    ivan = fake.add_member("ivan")
    listing = await fake.invoke_slash(ivan, "problems")
    embed = (await fake.wait_for_original(listing, lambda m: bool(m.embeds))).embeds[0]
    categories = [f["name"] for f in embed["fields"]]
    assert categories == sorted(categories) and "activation-function" in categories and "convolution" in categories
    assert "🟢 `relu` ReLU" in str(embed["fields"])

    shown = await fake.invoke_slash(ivan, "problem", {"slug": "matrix-multiplication"})
    matmul = (await fake.wait_for_original(shown, lambda m: bool(m.embeds))).embeds[0]
    fields = {f["name"]: f["value"] for f in matmul["fields"]}
    assert "size_t m, size_t n, size_t k" in fields["CUDA"] and fields["FLOPs"].startswith("2")
    assert "m=129,n=127,k=255" in fields["Test cases (CPU runner)"] and "GFLOP" in fields["Test cases (GPU)"]

    starter = await fake.invoke_slash(ivan, "starter", {"slug": "vector_add", "language": "python"})
    reply = await fake.wait_for_original(starter, lambda m: bool(m.files))
    assert reply.ephemeral and "def solution(d_input1: torch.Tensor" in reply.file("vector_addition.py").decode()

    choices = await fake.autocomplete(ivan, "leaderboard", "problem", "ma")
    values = [c["value"] for c in choices]
    prefixed = [v for v in values if v.startswith("ma")]
    # Slugs that start with the text come first, alphabetically, then the ones that merely contain it.
    assert values[: len(prefixed)] == sorted(prefixed) and "matrix-multiplication" in prefixed
    assert "argmax" in values[len(prefixed) :]


async def test_a_distributed_problem_is_described_and_listed_under_its_category(
    arena: Arena, caplog: pytest.LogCaptureFixture
) -> None:
    """all-gather, registered as the bot starts: `/problem` gives its ranks and its signatures with rank, world size
    and group (or communicator), and `/problems` lists it under `distributed`, with no warning that a problem
    cannot be described."""
    caplog.set_level(logging.WARNING, logger="core.browse")
    fake = arena.fake
    olga = fake.add_member("olga")
    shown = await fake.invoke_slash(olga, "problem", {"slug": "all-gather"})
    embed = (await fake.wait_for_original(shown, lambda m: bool(m.embeds))).embeds[0]
    assert "No description" not in embed["description"] and embed["description"].startswith("🟢 easy · distributed")
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Ranks"].startswith("2, 4, 8 at once"), fields
    assert "int rank, int world_size, ncclComm_t comm" in fields["CUDA"], fields
    assert "rank: int, world_size: int, group: torch.distributed.ProcessGroup" in fields["Python"], fields
    assert "n=999 · 2 ranks" in fields["Test cases (CPU runner)"], fields

    listing = await fake.invoke_slash(olga, "problems")
    page = await fake.wait_for_original(listing, lambda m: bool(m.embeds))
    first_id = page.id
    listed: dict[str, str] = {}
    # Page on until the category shows (it sorts after the first page's), or the list ends.
    while True:
        listed |= {f["name"]: f["value"] for f in page.embeds[0]["fields"]}
        more = {b["custom_id"]: not b.get("disabled", False) for b in page.buttons()}.get("page:next", False)
        if "distributed" in listed or not more:
            break
        mark = fake.checkpoint()
        await fake.press_button(olga, page, "page:next")
        page = await fake.wait_for_message(lambda m: m.id == first_id, after=mark)
    assert "🟢 `all-gather` All-Gather" in listed.get("distributed", ""), sorted(listed)
    assert "all-gather" not in listed.get("general", ""), listed.get("general")
    assert not [r.getMessage() for r in caplog.records if "cannot be described" in r.getMessage()]


async def _seed_board(arena: Arena, players: int, me: FakeUser) -> None:
    """`players` users ranked on vector_add/h100/float32 with scores 100, 99, …; `me` is 12th."""
    for i in range(players):
        user = str(me.id) if i == 11 else f"player{i:02d}"
        await submit_scored(arena.bot.pool, user, 100.0 - i, gpu="h100")


async def test_leaderboard_pages_with_buttons_only_for_the_caller(arena: Arena) -> None:
    fake = arena.fake
    judy = fake.add_member("judy")
    await _seed_board(arena, 25, judy)
    asked = await fake.invoke_slash(judy, "leaderboard", {"problem": "vector_add", "gpu": "h100"})
    board = await fake.wait_for_original(asked, lambda m: bool(m.embeds))
    first = board.embeds[0]
    assert first["title"] == "🏆 vector-addition · h100 · float32 · cpu timing" and not board.ephemeral
    assert "`   1  player00" in first["description"] and "`  10  player09" in first["description"]
    assert first["fields"][0]["value"] == "#12 with 89 GFLOPS (submission #12)"
    disabled = {b["custom_id"]: b.get("disabled", False) for b in board.buttons()}
    assert disabled == {"page:first": True, "page:prev": True, "page:next": False, "page:mine": False}

    mark = fake.checkpoint()
    await fake.press_button(judy, board, "page:mine")
    page2 = await fake.wait_for_message(lambda m: m.id == board.id, after=mark)
    assert "`  11  player10" in page2.embeds[0]["description"] and "◀" in page2.embeds[0]["description"]

    stranger = await fake.press_button(fake.add_member("ken"), board, "page:next")
    assert "belong to whoever ran the command" in str((await fake.wait_for_response(stranger))["data"]["embeds"])

    mark = fake.checkpoint()
    await fake.press_button(judy, board, "page:next")
    page3 = await fake.wait_for_message(lambda m: m.id == board.id, after=mark)
    assert "`  25  player24" in page3.embeds[0]["description"] and page3.embeds[0]["footer"]["text"].startswith(
        "Page 3"
    )
    assert {b["custom_id"]: b.get("disabled", False) for b in page3.buttons()}["page:next"] is True


@pytest.mark.parametrize("bot_overrides", [{"view_timeout_s": 1.0}])
async def test_leaderboard_buttons_are_disabled_once_the_view_times_out(arena: Arena) -> None:
    fake = arena.fake
    judy = fake.add_member("judy")
    await _seed_board(arena, 25, judy)
    asked = await fake.invoke_slash(judy, "leaderboard", {"problem": "vector_add", "gpu": "h100"})
    board = await fake.wait_for_original(asked, lambda m: bool(m.embeds))
    timed_out = await fake.wait_for_message(lambda m: m.id == board.id and all(b.get("disabled") for b in m.buttons()))
    # The page as first shown (the message object keeps every state: by now it may show the timeout already).
    shown = next(state for state in timed_out.history if state.get("components"))
    enabled = [b["custom_id"] for b in walk_components(shown["components"]) if b["type"] == 2 and not b.get("disabled")]
    assert enabled == ["page:next", "page:mine"]
    assert timed_out.buttons() and timed_out.embeds == shown["embeds"], "only the buttons change on timeout"


@pytest.mark.parametrize("bot_overrides", [{"view_timeout_s": 3.0}])
async def test_a_board_still_open_when_the_bot_stops_times_out_quietly(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    # discord.py keeps a view's timer running after its client has closed. The timeout then has nothing to edit
    # with: it once raised "Session is closed" minutes later, in whichever test happened to be running.
    outcomes: list[BaseException | None] = []
    on_timeout = ArenaView.on_timeout

    async def observed(view: ArenaView) -> None:
        try:
            await on_timeout(view)
        except BaseException as exc:
            outcomes.append(exc)
            raise
        outcomes.append(None)

    monkeypatch.setattr(ArenaView, "on_timeout", observed)
    fake = arena.fake
    judy = fake.add_member("judy")
    await _seed_board(arena, 25, judy)
    asked = await fake.invoke_slash(judy, "leaderboard", {"problem": "vector_add", "gpu": "h100"})
    await fake.wait_for_original(asked, lambda m: bool(m.embeds))
    await arena.bot.close()
    async with asyncio.timeout(120):
        while not outcomes:
            await asyncio.sleep(0.05)
    assert outcomes == [None]


async def test_submission_shows_own_result_and_code_but_not_others(arena: Arena) -> None:
    fake = arena.fake
    lena, mike = fake.add_member("lena"), fake.add_member("mike")
    await submit_scored(arena.bot.pool, str(lena.id), 42.0, gpu="h100")

    own = await fake.invoke_slash(lena, "submission", {"id": 1})
    reply = await fake.wait_for_original(own, lambda m: bool(m.embeds))
    assert reply.ephemeral and reply.embeds[0]["color"] == GREEN
    assert "n=1024" in reply.embeds[0]["description"]
    assert reply.file("solution.py").startswith(b"import torch") and reply.file("roofline.png")

    other = await fake.invoke_slash(mike, "submission", {"id": 1})
    assert "You have no submission #1" in await arena.error_of(other)

    stats = await fake.invoke_slash(lena, "me")
    embed = (await fake.wait_for_original(stats, lambda m: bool(m.embeds))).embeds[0]
    assert embed["description"].startswith("1 submissions (1 passed) on 1 problems")
    assert "**#1** `vector-addition` · h100 · float32 · cpu: 42 GFLOPS" in str(embed["fields"])


async def test_quota_shows_each_modes_submissions_left_and_when_they_come_back(arena: Arena) -> None:
    fake = arena.fake
    lena = fake.add_member("lena")
    rate = arena.bot.settings.arena.rate
    await add_problems(arena.bot.pool)
    await submit(arena.bot.pool, request(str(lena.id)), rate)  # one ranked submission, under the bot's limits

    reply = await fake.invoke_slash(lena, "quota")
    message = await fake.wait_for_original(reply, lambda m: bool(m.embeds))
    assert message.ephemeral
    embed = message.embeds[0]
    fields = {f["name"].split(" ")[0]: f for f in embed["fields"]}
    assert list(fields) == ["test", "benchmark", "ranked", "profile", "queue:"]
    assert fields["ranked"]["value"].startswith(f"{rate.ranked_burst - 1} of {rate.ranked_burst} left · next in ")
    assert fields["test"]["value"] == f"{rate.test_burst} of {rate.test_burst} left · full"
    # No runner serves h100 here, so the run waits first in its queue, with no finished job to estimate from.
    assert fields["queue:"]["name"] == "queue: 1 queued · no start estimate yet"
    assert " · ranked on h100 · position 1 · no estimate yet" in fields["queue:"]["value"]
