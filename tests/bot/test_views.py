"""The paginator without Discord: which buttons a page enables, and where "My rank" leads."""

from __future__ import annotations

from datetime import UTC, datetime

import discord

from bot.ui.pages import LeaderboardPages
from bot.ui.views import Page, Paginator
from core.browse import LeaderboardPage
from core.leaderboard import Board
from core.store.leaderboard import BoardRow
from core.store.problems import ProblemVersion

NOW = datetime(2026, 11, 21, tzinfo=UTC)
PROBLEM = ProblemVersion(1, "matmul", "Matrix multiplication", True, 1, 1, None, ("float32",), "gflops", NOW)


class Numbers:
    """Pages of 10 numbers, 3 pages in all; the caller sits on page 2 (index 1)."""

    async def get_page(self, index: int) -> Page:
        embed = discord.Embed(description=" ".join(str(n) for n in range(index * 10, index * 10 + 10)))
        return Page(embed, index, has_next=index < 2, caller_index=1)


def states(view: Paginator) -> dict[str, bool]:
    return {b.custom_id: b.disabled for b in view.children if isinstance(b, discord.ui.Button)}  # type: ignore[misc]


async def test_buttons_follow_the_page() -> None:
    view = Paginator(Numbers(), owner_id=1, timeout=10)
    source = view.source
    view._show(await source.get_page(0))
    assert states(view) == {"page:first": True, "page:prev": True, "page:next": False, "page:mine": False}
    view._show(await source.get_page(1))
    assert states(view) == {"page:first": False, "page:prev": False, "page:next": False, "page:mine": True}
    view._show(await source.get_page(2))
    assert states(view)["page:next"] is True
    view.disable()
    assert all(states(view).values())
    view.stop()


async def test_leaderboard_pages_know_the_callers_page() -> None:
    rows = [BoardRow(r, r, f"user{r}", r, "cuda", 1000.0 - r, NOW) for r in range(11, 21)]
    me = BoardRow(27, 99, "me", 99, "python", 5.0, NOW)

    async def fetch(index: int) -> LeaderboardPage:
        return LeaderboardPage(Board(PROBLEM, "h100", "float32", "any", rows), index, 10, True, me)

    page = await LeaderboardPages(fetch, "me").get_page(1)
    assert page.caller_index == 2 and page.has_next
    assert "`  11  user11" in (page.embed.description or "")
    assert page.embed.fields[0].value == "#27 with 5 GFLOPS (submission #99)"
