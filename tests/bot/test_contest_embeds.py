"""Contest and rating embeds stay within Discord's limits on a crowded board, and say what matters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.ui.contests import (
    contest_list_pages,
    rating_table_pages,
    render_amend_announcement,
    render_amendment,
    render_contest,
    render_freeze_announcement,
    render_rating,
    render_waiting_announcement,
)
from bot.ui.embeds import TOTAL_LIMIT
from core.contests import Amendment, BoardLine, Column, ContestBoard, ContestView, Frozen, Waiting
from core.contests.views import ContestPage, HistoryLine, RatingCard, RatingRow
from core.store.contests import BoardCell, Contest, ContestProblem, RatedUser, RatingChange, StoredRating, Target

START = datetime(2030, 1, 31, 18, 0, tzinfo=UTC)
END = START + timedelta(hours=2)
PROBLEMS = [ContestProblem(i, f"problem_{i}_" + "x" * 40, f"Problem {i}", 1, i, True) for i in range(6)]
TARGETS = [Target(f"gpu-{i}", dtype) for i in range(3) for dtype in ("float32", "float16")]


def contest(*, frozen: bool = False, cancelled: bool = False) -> Contest:
    return Contest(
        1, "sprint", "S" * 200, START, END, "public", "rank_sum", 1, START - timedelta(days=1),
        START if cancelled else None, END if frozen else None, END if frozen else None,
    )  # fmt: skip


def board(c: Contest, entrants: int = 300) -> ContestBoard:
    columns = tuple(Column(p.problem_id, p.slug, t.gpu_type, t.dtype, entrants) for p in PROBLEMS for t in TARGETS)
    lines = tuple(
        BoardLine(
            u // 2 + 1, u, "N" * 100, 36 * (u // 2 + 1),
            tuple(BoardCell(col.problem_id, col.gpu_type, col.dtype, u, "N", u + 1, 10_000 + u, 1.0, "arena")
                  for col in columns),
        )
        for u in range(entrants)
    )  # fmt: skip
    return ContestBoard(c, "contest", c.frozen_at is not None, columns, lines)


def test_a_crowded_frozen_board_fits_and_states_the_scoring_window_and_podium() -> None:
    c = contest(frozen=True)
    embed = render_contest(ContestPage(ContestView(c, PROBLEMS, TARGETS), board(c)), END + timedelta(hours=1))
    assert len(embed) <= TOTAL_LIMIT
    assert "Rank-sum scoring" in (embed.description or "") and "🧊 frozen" in (embed.description or "")
    assert f"<t:{int(START.timestamp())}:F> (<t:{int(START.timestamp())}:R>)" in (embed.description or "")
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Podium"].count("\n") == 5  # six people share places 1 to 3
    standings = next(value for name, value in fields.items() if name.startswith("Standings"))
    assert "more." in standings and "A #1" in standings


def test_the_freeze_announcement_fits_with_every_rating_change() -> None:
    c = contest(frozen=True)
    changes = [RatingChange(u, 1, u // 2 + 1, 1500, 350, 0.06, 1500 + 300 - u, 200, 0.06) for u in range(300)]
    embed = render_freeze_announcement(Frozen(c, board(c), [7], changes))
    assert len(embed) <= TOTAL_LIMIT
    assert "left out" in (embed.description or "") and "/reveal off" in (embed.description or "")
    assert [f.name for f in embed.fields] == ["Podium", "Rating changes"]


def test_the_waiting_note_counts_the_runs_and_names_the_latest_freeze() -> None:
    embed = render_waiting_announcement(Waiting(contest(), [4, 5, 6], END + timedelta(hours=1)))
    assert embed.title == f"⏳ {'S' * 200} has ended" and len(embed) <= TOTAL_LIMIT
    unix = int((END + timedelta(hours=1)).timestamp())
    assert f"waits for 3 run(s) still being judged, until <t:{unix}:R> at the latest" in (embed.description or "")


def test_an_amendment_that_moves_everyone_fits_and_one_that_moves_nobody_says_so() -> None:
    c = contest(frozen=True)
    before = board(c)
    # Everyone moves: the board reversed, and the last entrant left off it.
    lines = tuple(
        BoardLine(i + 1, line.user_id, line.display_name, i + 1, line.cells)
        for i, line in enumerate(reversed(before.lines[1:]))
    )
    after = ContestBoard(c, "contest", True, before.columns, lines)
    amendment = Amendment(before, after)
    assert amendment.moves[-1].before == 1 and amendment.moves[-1].after is None
    for embed in (render_amendment(amendment), render_amend_announcement(amendment)):
        assert len(embed) <= TOTAL_LIMIT and "more." in embed.fields[0].value
    same = render_amendment(Amendment(before, before))
    assert "No change" in (same.description or "") and not same.fields


def test_lists_cards_and_tables_fit_and_mark_what_matters() -> None:
    views = [ContestView(contest(cancelled=i % 2 == 0), PROBLEMS, TARGETS) for i in range(20)]
    pages = contest_list_pages(views, START)
    assert len(pages) == 3 and all(len(p) <= TOTAL_LIMIT for p in pages)
    assert pages[0].fields[0].name.startswith("~~S")
    history = [HistoryLine(f"c{i}", "T" * 200, 1, 1500, 1600) for i in range(40)]
    card = render_rating(RatingCard("N" * 100, StoredRating(1, 1600.0, 100.0, 0.06, 40), history))
    assert len(card) <= TOTAL_LIMIT and "conservative **1400**" in (card.description or "")
    assert "Not rated yet" in (render_rating(RatingCard("new", None, [])).description or "")
    rows = [RatingRow(i + 1, RatedUser(i, "N" * 100, 1600.0, 100.0, 0.06, 3)) for i in range(40)]
    table = rating_table_pages(rows)
    assert len(table) == 3 and all(len(p) <= TOTAL_LIMIT for p in table)
