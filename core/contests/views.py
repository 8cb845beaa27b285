"""Read-only views of contests and ratings for the front ends: the contest list, a contest with its board, a
user's rating card and the rating table. The rules are in the rest of `core.contests`; this only gathers what a page
shows."""

from __future__ import annotations

from dataclasses import dataclass

from core.contests.boards import PHASES, ContestBoard, contest_board
from core.contests.lookup import ContestView, view
from core.rating import Rating, conservative_rating
from core.store import contests, users
from core.store.contests import Contest, RatedUser, StoredRating
from core.store.pool import Conn

AUTOCOMPLETE_LIMIT = 25


async def list_contests(conn: Conn) -> list[ContestView]:
    """Every contest, cancelled ones too, the latest start first."""
    found = await contests.list_contests(conn, include_cancelled=True)
    return [
        ContestView(c, await contests.problems_of(conn, c.id), await contests.targets_of(conn, c.id)) for c in found
    ]


async def match_contests(conn: Conn, typed: str) -> list[Contest]:
    """Contests whose slug or title holds what was typed (suggestions; the command checks the slug again)."""
    needle = typed.strip().lower()
    found = await contests.list_contests(conn, include_cancelled=False)
    return [c for c in found if needle in c.slug or needle in c.title.lower()][:AUTOCOMPLETE_LIMIT]


@dataclass(frozen=True)
class ContestPage:
    view: ContestView
    board: ContestBoard


async def contest_page(conn: Conn, slug: str, phase: str = PHASES[0]) -> ContestPage:
    """The contest and its board of `phase` (the frozen board once frozen; live until then, and for upsolve)."""
    board = await contest_board(conn, slug, phase)
    return ContestPage(await view(conn, slug), board)


@dataclass(frozen=True)
class HistoryLine:
    contest_slug: str
    contest_title: str
    place: int
    rating_before: float
    rating_after: float

    @property
    def delta(self) -> float:
        return self.rating_after - self.rating_before


@dataclass(frozen=True)
class RatingCard:
    """A user's rating (None before their first rated contest), its conservative value and its history."""

    display_name: str
    current: StoredRating | None
    history: list[HistoryLine]

    @property
    def conservative(self) -> float | None:
        c = self.current
        return None if c is None else conservative_rating(Rating(c.rating, c.rd, c.volatility))


async def rating_card(conn: Conn, external_id: str, display_name: str) -> RatingCard:
    """The rating of the user known by `external_id`; `display_name` names one the store has never seen."""
    user = await users.find_user(conn, external_id)
    if user is None:
        return RatingCard(display_name, None, [])
    return await user_rating_card(conn, user)


async def user_rating_card(conn: Conn, user: users.User) -> RatingCard:
    """The rating card of a user the store knows."""
    current = (await contests.ratings_of(conn, [user.id])).get(user.id)
    by_id = {c.id: c for c in await contests.list_contests(conn, include_cancelled=True)}
    history = [
        HistoryLine(by_id[h.contest_id].slug, by_id[h.contest_id].title, h.place, h.rating_before, h.rating_after)
        for h in await contests.rating_history(conn, user.id)
    ]
    return RatingCard(user.display_name, current, history)


@dataclass(frozen=True)
class RatingRow:
    place: int
    user: RatedUser

    @property
    def conservative(self) -> float:
        return conservative_rating(Rating(self.user.rating, self.user.rd, self.user.volatility))


async def rating_table(conn: Conn) -> list[RatingRow]:
    """Every rated user who is not banned, by conservative rating, best first."""
    return [RatingRow(i, user) for i, user in enumerate(await contests.rating_table(conn), start=1)]
