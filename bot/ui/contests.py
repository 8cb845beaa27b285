"""Embeds for contests and ratings: a contest and its board, the contest list, the warning before a start that a
target has no runner, the announcements of the end (a contest waiting for its last runs, then its podium) and of an
amended board, a user's rating card and the rating
table. Pure functions of core data.

Times are Discord timestamps (`<t:UNIX:F>`, `<t:UNIX:R>`): each reader's client shows them in their own zone.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from datetime import datetime

import discord

from bot.ui.embeds import COLOUR_INFO, DESCRIPTION_LIMIT, FIELD_LIMIT, TITLE_LIMIT, clip, fit
from core.contests import Amendment, ContestBoard, ContestView, Frozen, PlaceMove, StartWarning, Waiting
from core.contests.views import ContestPage, RatingCard, RatingRow
from core.podium_checks import podium_line
from core.store.contests import Contest

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}
STATES = {
    "upcoming": "⏳ scheduled",
    "running": "🟢 running",
    "ended": "⌛ ended: waiting for its last results before the board freezes",
    "frozen": "🧊 frozen: the board is final",
    "cancelled": "🚫 cancelled",
}
SCORING = (
    "**Rank-sum scoring.** Each column (a problem on a target) ranks its entrants 1, 2, 3… by their best ranked "
    "run; a column you did not enter counts as its entrants + 1. Your total is the sum over the columns: the "
    "lowest total wins, and equal totals share a place."
)
UPSOLVE = "**Upsolve board**: ranked runs sent after the end, scored the same way. It is not rated."
BOARD_LINES = 20
LIST_PER_PAGE = 8
RATINGS_PER_PAGE = 15
HISTORY_LINES = 15
COLOUR_CONTEST = discord.Colour.purple()
COLOUR_CANCELLED = discord.Colour.dark_grey()


def stamp(when: datetime) -> str:
    """`when` as the reader's local date and time, and how far from now."""
    unix = int(when.timestamp())
    return f"<t:{unix}:F> (<t:{unix}:R>)"


def _window(contest: Contest) -> str:
    return f"Start {stamp(contest.starts_at)}\nEnd {stamp(contest.ends_at)}"


def _setup(view: ContestView) -> str:
    problems = ", ".join(f"`{p.slug}` v{p.problem_version}" for p in view.problems)
    targets = ", ".join(f"`{t.gpu_type}` · {t.dtype}" for t in view.targets)
    access = "invite-only" if view.contest.visibility == "invite_only" else "public: anyone may enter"
    share = view.contest.reserve_share
    reserve = f"\nReserves {share:.0%} of its pools for its ranked runs while it runs" if share else ""
    return f"Problems: {problems}\nTargets: {targets}\nEntry: {access}{reserve}"


def _colour(view: ContestView) -> discord.Colour:
    return COLOUR_CANCELLED if view.contest.cancelled_at is not None else COLOUR_CONTEST


def render_contest_saved(view: ContestView, what: str, now: datetime, warning: str | None = None) -> discord.Embed:
    """A moderator's receipt: the contest as it now stands (`what`: created, changed, cancelled), with the warning
    that a target has no runner when there is one."""
    c = view.contest
    embed = discord.Embed(title=clip(f"Contest `{c.slug}` {what}: {c.title}", TITLE_LIMIT), colour=_colour(view))
    embed.description = clip(
        f"{STATES[view.state(now)]}\n{_window(c)}\n{_setup(view)}\n`/contest {c.slug}` shows its board.",
        DESCRIPTION_LIMIT,
    )
    if warning is not None:
        embed.add_field(name="⚠️ Not enterable yet", value=clip(warning, FIELD_LIMIT), inline=False)
    return embed


def render_start_warning(warning: StartWarning) -> discord.Embed:
    """The notice, shortly before a contest starts, that one of its GPU types has no runner."""
    c = warning.view.contest
    title = f"⚠️ {c.title}: no runner for {', '.join(warning.unserved)}"
    embed = discord.Embed(title=clip(title, TITLE_LIMIT), colour=COLOUR_CONTEST)
    embed.description = clip(f"Starts {stamp(c.starts_at)}.\n{warning.text}", DESCRIPTION_LIMIT)
    return embed


def _column_key(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else f"{letters[i // len(letters) - 1]}{letters[i % len(letters)]}"


def _board_lines(board: ContestBoard) -> list[str]:
    lines = []
    for line in board.lines[:BOARD_LINES]:
        cells = ", ".join(
            f"{_column_key(i)} #{cell.rank}" if cell.submission_id is not None else f"{_column_key(i)} –{cell.rank}"
            for i, cell in enumerate(line.cells)
        )
        medal = MEDALS.get(line.place, f"`{line.place}.`")
        lines.append(f"{medal} **{clip(line.display_name, 60)}** · total **{line.total}** ({cells})")
    if len(board.lines) > BOARD_LINES:
        lines.append(f"… and {len(board.lines) - BOARD_LINES} more.")
    return lines


def render_contest(page: ContestPage, now: datetime) -> discord.Embed:
    """The contest, its state and window, and its board (contest or upsolve)."""
    view, board = page.view, page.board
    c = view.contest
    which = "upsolve board" if board.phase == "upsolve" else ("final board" if board.frozen else "live board")
    embed = discord.Embed(title=clip(f"{c.title} (`{c.slug}`) · {which}", TITLE_LIMIT), colour=_colour(view))
    intro = [STATES[view.state(now)], _window(c), SCORING]
    if board.phase == "upsolve":
        intro.append(UPSOLVE)
    embed.description = clip("\n".join(intro), DESCRIPTION_LIMIT)
    if board.frozen and board.podium:
        embed.add_field(name="Podium", value=_joined(_podium(board)), inline=False)
    columns = [
        f"{_column_key(i)}: `{col.slug}` · `{col.gpu_type}` · {col.dtype} ({col.entrants} entrant(s))"
        for i, col in enumerate(board.columns)
    ]
    embed.add_field(name="Columns", value=clip("\n".join(columns) or "none", FIELD_LIMIT), inline=False)
    ranked = _board_lines(board) or ["Nobody is on this board yet."]
    embed.add_field(name="Standings (–n: no run, the penalty rank)", value=_joined(ranked), inline=False)
    return fit(embed)


def _podium(board: ContestBoard) -> list[str]:
    return [f"{MEDALS[line.place]} **{clip(line.display_name, 60)}** (total {line.total})" for line in board.podium]


def _joined(lines: Sequence[str]) -> str:
    """Lines that fit a field: those past the limit are dropped whole, with a count."""
    kept: list[str] = []
    for i, line in enumerate(lines):
        note = f"\n… and {len(lines) - i} more."
        if len("\n".join([*kept, line])) + len(note) > FIELD_LIMIT:
            return "\n".join(kept) + note
        kept.append(line)
    return "\n".join(kept)


def contest_list_pages(views: Sequence[ContestView], now: datetime) -> list[discord.Embed]:
    """Every contest, the latest start first, a few per page; cancelled ones marked."""
    if not views:
        embed = discord.Embed(title="Contests", colour=COLOUR_CONTEST)
        embed.description = "No contest yet. Moderators create them with `/mod contest create`."
        return [embed]
    pages = []
    chunks = [views[i : i + LIST_PER_PAGE] for i in range(0, len(views), LIST_PER_PAGE)]
    for number, chunk in enumerate(chunks, start=1):
        embed = discord.Embed(title=f"Contests · {len(views)} in all", colour=COLOUR_CONTEST)
        embed.description = "`/contest <slug>` shows a contest's board; `phase:upsolve` its upsolve board."
        for v in chunk:
            c = v.contest
            name = f"{'~~' if c.cancelled_at else ''}{c.title}{'~~' if c.cancelled_at else ''} · {c.slug}"
            value = f"{STATES[v.state(now)]}\n{_window(c)}\n{_setup(v)}"
            embed.add_field(name=clip(name, 256), value=clip(value, FIELD_LIMIT), inline=False)
        embed.set_footer(text=f"page {number} of {len(chunks)}")
        pages.append(fit(embed))
    return pages


def render_waiting_announcement(waiting: Waiting) -> discord.Embed:
    """The public note when a contest has ended but its board waits for runs still being judged."""
    c = waiting.contest
    embed = discord.Embed(title=clip(f"⏳ {c.title} has ended", TITLE_LIMIT), colour=COLOUR_CONTEST)
    what = "second run(s) of the podium" if waiting.podium_checks else "run(s) still being judged"
    embed.description = (
        f"The final board waits for {len(waiting.pending_jobs)} {what}, until "
        f"<t:{int(waiting.freeze_by.timestamp())}:R> at the latest: runs accepted before the end count. "
        f"`/contest {c.slug}` shows the live board until then."
    )
    return embed


def _place(place: int | None) -> str:
    return "off the board" if place is None else str(place)


def _moves(moves: Sequence[PlaceMove]) -> list[str]:
    return [f"**{clip(m.display_name, 60)}**: {_place(m.before)} → {_place(m.after)}" for m in moves]


def render_amendment(amendment: Amendment) -> discord.Embed:
    """A moderator's receipt for an amended frozen board: the places that moved, or that nothing did."""
    c = amendment.after.contest
    embed = discord.Embed(title=clip(f"Final board of `{c.slug}` amended", TITLE_LIMIT), colour=COLOUR_CONTEST)
    if amendment.moves:
        text = "The board is recomputed and stored; a correction goes to the announcement channel."
    elif amendment.changed:
        text = "No change of place (only totals changed); nothing is announced."
    else:
        text = "No change: the runs as they stand now give the board that froze. Nothing is announced."
    embed.description = f"{text} Ratings stay as they were given at the freeze. The audit log has the reason."
    if amendment.moves:
        embed.add_field(name="Places (before → after)", value=_joined(_moves(amendment.moves)), inline=False)
    return fit(embed)


def render_amend_announcement(amendment: Amendment) -> discord.Embed:
    """The public correction when an amendment moved places: who moved, and the podium as it now stands."""
    c, board = amendment.after.contest, amendment.after
    embed = discord.Embed(title=clip(f"📝 {c.title}: the final board is corrected", TITLE_LIMIT), colour=COLOUR_CONTEST)
    embed.description = (
        f"A moderator re-judged runs of `{c.slug}` and amended its final board; `/contest {c.slug}` shows it. "
        "Ratings stay as they were given at the freeze."
    )
    embed.add_field(name="Places (before → after)", value=_joined(_moves(amendment.moves)), inline=False)
    embed.add_field(name="Podium", value=_joined(_podium(board) or ["Nobody is on the board."]), inline=False)
    return fit(embed)


def render_freeze_announcement(frozen: Frozen) -> discord.Embed:
    """The public note when a contest's board freezes: the podium, the rating changes and the code reveal."""
    c, board = frozen.contest, frozen.board
    embed = discord.Embed(title=clip(f"🏆 {c.title} is over", TITLE_LIMIT), colour=discord.Colour.gold())
    lines = [f"The board of `{c.slug}` is final ({len(board.lines)} entrant(s)); `/contest {c.slug}` shows it."]
    if frozen.left_out_jobs:
        lines.append(
            f"{len(frozen.left_out_jobs)} run(s) had not finished an hour after the end and are left out; a "
            "moderator may add them later."
        )
    checked = podium_line(frozen.podium)
    if checked is not None:
        lines.append(checked)
    lines.append(
        "The code of contest runs can now be read with `/submission <id>`, except from people who chose "
        "`/reveal off`. Ranked runs from now on go to the upsolve board (`/contest "
        f"{c.slug} phase:upsolve`)."
    )
    embed.description = clip("\n".join(lines), DESCRIPTION_LIMIT)
    podium = []
    for line in board.podium:
        runs = ", ".join(f"#{cell.submission_id}" for cell in line.cells if cell.submission_id is not None)
        podium.append(f"{MEDALS[line.place]} **{clip(line.display_name, 60)}** · total {line.total} · runs {runs}")
    embed.add_field(name="Podium", value=_joined(podium or ["Nobody entered."]), inline=False)
    names = {line.user_id: line.display_name for line in board.lines}
    changes = [
        f"{clip(names.get(r.user_id, str(r.user_id)), 60)}: {r.rating_before:.0f} → {r.rating_after:.0f} "
        f"({r.rating_after - r.rating_before:+.0f})"
        for r in sorted(frozen.ratings, key=lambda r: (r.place, r.user_id))
    ]
    if changes:
        embed.add_field(name="Rating changes", value=_joined(changes), inline=False)
    else:
        embed.add_field(name="Rating changes", value="None: a contest needs two entrants to be rated.", inline=False)
    return fit(embed)


def render_rating(card: RatingCard) -> discord.Embed:
    """A user's Elo-MMR rating, RD and conservative value, and one line per rated contest (newest first)."""
    embed = discord.Embed(title=clip(f"Rating of {card.display_name}", TITLE_LIMIT), colour=COLOUR_INFO)
    current, conservative = card.current, card.conservative
    if current is None or conservative is None:
        embed.description = "Not rated yet: a rating comes from the first contest entered (`/contests`)."
        return embed
    embed.description = (
        f"**{current.rating:.0f}** ± {current.rd:.0f} (RD) · conservative **{conservative:.0f}** "
        f"(rating − 2·RD, what `/ratings` ranks by) · {current.contests} contest(s)"
    )
    history = [
        f"`{h.contest_slug}` {clip(h.contest_title, 60)} · place {h.place} · {h.rating_before:.0f} → "
        f"{h.rating_after:.0f} ({h.delta:+.0f})"
        for h in reversed(card.history[-HISTORY_LINES:])
    ]
    embed.add_field(name="History", value=_joined(history or ["none"]), inline=False)
    return fit(embed)


def rating_table_pages(rows: Sequence[RatingRow]) -> list[discord.Embed]:
    """The rating table by conservative rating, a page at a time."""
    if not rows:
        embed = discord.Embed(title="Ratings", colour=COLOUR_INFO)
        embed.description = "Nobody is rated yet: ratings come from contests (`/contests`)."
        return [embed]
    chunks = [rows[i : i + RATINGS_PER_PAGE] for i in range(0, len(rows), RATINGS_PER_PAGE)]
    pages = []
    for number, chunk in enumerate(chunks, start=1):
        embed = discord.Embed(title=f"Ratings · {len(rows)} rated", colour=COLOUR_INFO)
        lines = ["Ranked by the conservative rating (rating − 2·RD). `/rating` shows one user's history."]
        lines += [
            f"`{row.place}.` **{clip(row.user.display_name, 60)}** · **{row.conservative:.0f}** "
            f"({row.user.rating:.0f} ± {row.user.rd:.0f}) · {row.user.contests} contest(s)"
            for row in chunk
        ]
        embed.description = clip("\n".join(lines), DESCRIPTION_LIMIT)
        embed.set_footer(text=f"page {number} of {len(chunks)}")
        pages.append(fit(embed))
    return pages
