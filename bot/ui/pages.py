"""Embeds for browsing: the problem list, one problem, leaderboard pages, a submission, a user's stats."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from itertools import groupby

import discord

from bot.ui.embeds import (
    COLOUR_INFO,
    DESCRIPTION_LIMIT,
    FIELD_LIMIT,
    FIELD_NAME_LIMIT,
    TITLE_LIMIT,
    clip,
    escape_code,
    fit,
    format_rate,
    world_note,
)
from bot.ui.views import Page
from core.browse import LeaderboardPage, ProblemEntry, SubmissionDetail, UserStats
from core.leaderboard import OLDER_PROTOCOL_MARK, older_protocol, older_protocol_note
from core.quota import ModeQuota, describe_quota, describe_rate
from problems.catalog import CaseInfo

MAX_FIELDS = 25
DIFFICULTY_MARK = {"easy": "🟢", "medium": "🟡", "hard": "🔴"}


def _unit(metric: str) -> str:
    return "GFLOPS" if metric == "gflops" else "GB/s"


LIST_LEGEND = "🟢 easy · 🟡 medium · 🔴 hard. `/problem <slug>` describes one; `/starter` gives a template."
# Lines of the problem list per page: well inside an embed's 6000 characters and readable on a phone.
PROBLEM_LINES_PER_PAGE = 24


def _problem_line(e: ProblemEntry) -> str:
    closed = " *(closed)*" if not e.stored.enabled else ""
    mark = DIFFICULTY_MARK.get(e.difficulty, "⚪")
    return f"{mark} `{e.stored.slug}` {clip(e.stored.title, 50)}{closed}"


def problem_list_pages(entries: list[ProblemEntry], per_page: int = PROBLEM_LINES_PER_PAGE) -> list[discord.Embed]:
    """The problem list as pages: grouped by category, easiest first; a category cut by a page break (or by a
    field's size limit) goes on with "(continued)"; closed problems are marked."""
    if not entries:
        embed = discord.Embed(title="Problems", colour=COLOUR_INFO)
        embed.description = "No problems yet. A moderator adds them with `/mod problem-add`."
        return [embed]
    chunks: list[list[tuple[str, list[str]]]] = [[]]
    used = 0
    for category, group in groupby(entries, key=lambda e: e.category):
        first = True
        for line in (_problem_line(e) for e in group):
            if used >= per_page or (len(chunks[-1]) >= MAX_FIELDS and first):
                chunks.append([])
                used = 0
            fields = chunks[-1]
            fresh_field = not fields or fields[-1][0] not in (category, f"{category} (continued)") or first
            if not fresh_field and len("\n".join([*fields[-1][1], line])) > FIELD_LIMIT:
                fresh_field = True
            if fresh_field:
                fields.append((category if first else f"{category} (continued)", []))
            fields[-1][1].append(line)
            used += 1
            first = False
    pages = []
    for number, chunk in enumerate(chunks, start=1):
        embed = discord.Embed(title=f"Problems · {len(entries)} in all", colour=COLOUR_INFO)
        embed.description = LIST_LEGEND
        for name, lines in chunk:
            embed.add_field(name=clip(name, FIELD_NAME_LIMIT), value="\n".join(lines), inline=False)
        embed.set_footer(text=f"page {number} of {len(chunks)}")
        pages.append(fit(embed))
    return pages


def render_problem_list(entries: list[ProblemEntry]) -> discord.Embed:
    """The first page of the problem list."""
    return problem_list_pages(entries)[0]


class StaticPages:
    """A PageSource over embeds made in advance."""

    def __init__(self, embeds: list[discord.Embed]) -> None:
        self._embeds = embeds

    async def get_page(self, index: int) -> Page:
        index = min(index, len(self._embeds) - 1)
        return Page(self._embeds[index], index, index + 1 < len(self._embeds))


def _cases_table(cases: tuple[CaseInfo, ...]) -> str:
    rows = [("case", "dims", "GFLOP", "MB fp32")]
    rows += [(c.name, "×".join(map(str, c.dims)), f"{c.gflop:.4g}", f"{c.megabytes:.4g}") for c in cases]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    return "```\n" + escape_code("\n".join(lines), FIELD_LIMIT - 10) + "\n```"


def render_problem(entry: ProblemEntry) -> discord.Embed:
    """Description, signatures, formulas and test cases of one problem."""
    stored, info = entry.stored, entry.info
    embed = discord.Embed(title=clip(f"{stored.title} ({stored.slug}, v{stored.version})", TITLE_LIMIT))
    embed.colour = COLOUR_INFO if stored.enabled else discord.Colour.dark_grey()
    state = "" if stored.enabled else "\n**Closed for submissions** (a moderator disabled it)."
    if info is None:
        embed.description = f"No description is available for this problem.{state}"
        return embed
    mark = DIFFICULTY_MARK.get(info.difficulty, "")
    head = f"{mark} {info.difficulty} · {', '.join(info.tags) or 'general'}\n\n{info.description}{state}"
    embed.description = clip(head, DESCRIPTION_LIMIT)
    if info.distributed:
        sizes = ", ".join(map(str, info.world_sizes))
        embed.add_field(name="Ranks", value=f"{sizes} at once: `/submit` with `ranks`, one board each", inline=False)
    embed.add_field(name="CUDA", value=f"```cuda\n{escape_code(info.c_signature, 900)};\n```", inline=False)
    embed.add_field(name="Python", value=f"```py\n{escape_code(info.python_signature, 900)}: ...\n```", inline=False)
    embed.add_field(name="FLOPs", value=clip(info.flops_formula, FIELD_LIMIT))
    embed.add_field(name="Bytes", value=clip(info.bytes_formula, FIELD_LIMIT))
    slowest = " of each sample's slowest rank" if info.distributed else ""
    embed.add_field(name="Ranked by", value=f"geometric-mean {_unit(stored.score_metric)}{slowest} (higher is better)")
    # As the problem computes on them: `uint32` for a finite-field problem stored under the float32 key.
    embed.add_field(name="Dtypes", value=", ".join(stored.dtype_labels))
    if info.checked:
        embed.add_field(name="Checked", value=clip(info.checked, FIELD_LIMIT), inline=False)
    if info.gpu_cases:
        embed.add_field(name="Test cases (GPU)", value=_cases_table(info.gpu_cases), inline=False)
        largest = info.gpu_cases[-1]
        if largest.shapes:
            embed.add_field(
                name=f"Shapes ({clip(largest.name, 60)})", value=clip(largest.shapes, FIELD_LIMIT), inline=False
            )
    if info.cpu_cases:
        embed.add_field(name="Test cases (CPU runner)", value=_cases_table(info.cpu_cases), inline=False)
    if not info.builtin:
        embed.add_field(name="Test cases", value="Generated by the problem's module on the runner.", inline=False)
    if info.distributed:
        # Only Python reaches a rank slot yet (`core.submit.distributed.check_world_size`).
        embed.set_footer(text="Solutions: def solution(..., rank, world_size, group) in a .py, run by every rank")
    else:
        embed.set_footer(text='Solutions: extern "C" void solution(...) in a .cu, or def solution(...) in a .py')
    return fit(embed)


def render_leaderboard(page: LeaderboardPage, caller_name: str) -> discord.Embed:
    """Ranks, users, geometric-mean score, language and date; the caller's own rank at the bottom."""
    board = page.board
    unit = board.score_unit
    language = "" if board.language == "any" else f" · {board.language}"
    # A board ranks one timing method's times; the heading says which, since another method has its own board.
    method = f" · {board.method} timing" if board.method is not None else ""
    # A distributed problem's board key (`cpux2`) only encodes its world size: the heading says it.
    where = f"{board.gpu_type}{world_note(board.problem.slug, board.gpu_type)}"
    title = f"🏆 {board.problem.slug} · {where} · {board.problem.data_type(board.dtype)}{method}{language}"
    embed = discord.Embed(title=clip(title, TITLE_LIMIT), colour=discord.Colour.gold())
    if not board.rows:
        embed.description = (
            "Nobody is on this board yet: submit with `mode: ranked` to be first."
            if page.page == 0
            else "No more entries."
        )
    else:
        lines = [f"`{'#':>4}  {'user':<18} {unit:>10}  lang    date`"]
        for row in board.rows:
            me = " ◀" if page.caller and row.submission_id == page.caller.submission_id else ""
            name = clip(row.display_name, 18).replace("`", "'")
            date = row.submitted_at.strftime("%Y-%m-%d")
            mark = OLDER_PROTOCOL_MARK if older_protocol(row) else " "
            score = format_rate(row.score)
            lines.append(f"`{row.rank:>4}  {name:<18} {score:>10}{mark} {row.language:<6}  {date}`{me}")
        if (note := older_protocol_note(board.rows)) is not None:
            lines.append(note)
        embed.description = clip("\n".join(lines), DESCRIPTION_LIMIT)
    if page.caller is not None:
        row = page.caller
        you = f"#{row.rank} with {format_rate(row.score)} {unit} (submission #{row.submission_id})"
    else:
        you = "not ranked yet"
    embed.add_field(name=clip(f"{caller_name}", FIELD_NAME_LIMIT), value=you, inline=False)
    embed.set_footer(text=f"Page {page.page + 1} · geometric mean of per-case {unit} · v{board.problem.version}")
    return fit(embed)


class LeaderboardPages:
    """A PageSource over a board: `fetch(page)` is the core call, bound to the board and the caller."""

    def __init__(self, fetch: Callable[[int], Awaitable[LeaderboardPage]], caller_name: str) -> None:
        self._fetch = fetch
        self._caller_name = caller_name

    async def get_page(self, index: int) -> Page:
        page = await self._fetch(index)
        caller_index = (page.caller.rank - 1) // page.page_size if page.caller is not None else None
        return Page(render_leaderboard(page, self._caller_name), page.page, page.has_next, caller_index)


def render_submission(detail: SubmissionDetail) -> discord.Embed:
    """A queued or running submission (its result embed is rendered by `render_result` once finished)."""
    sub = detail.submission
    embed = discord.Embed(
        title=clip(f"Submission #{sub.id} · {sub.slug} · {sub.dtype}", TITLE_LIMIT),
        description=f"**{sub.status}**: the result appears here once the job finishes. Your code is attached.",
        colour=COLOUR_INFO,
    )
    embed.set_footer(text=f"{detail.owner_name} · {sub.file_name} · {sub.language} · {sub.mode} · {sub.gpu_type}")
    return embed


def render_stats(stats: UserStats) -> discord.Embed:
    embed = discord.Embed(title=clip(f"📊 {stats.display_name}", TITLE_LIMIT), colour=COLOUR_INFO)
    if stats.total == 0:
        embed.description = "No submissions yet. `/problems` lists what to solve; `/submit` sends a solution."
    else:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(stats.by_status.items()))
        embed.description = f"{stats.total} submissions ({counts}) on {stats.problems_tried} problems."
    if stats.standings:
        lines = [
            f"**#{s.rank}** `{s.slug}` · {s.gpu_type} · {s.dtype}{f' · {s.method}' if s.method else ''}: "
            f"{format_rate(s.score)} {_unit(s.score_metric)} "
            f"(#{s.submission_id})"
            for s in stats.standings[:15]
        ]
        embed.add_field(name="Leaderboards", value=clip("\n".join(lines), FIELD_LIMIT), inline=False)
    if stats.recent:
        lines = [
            f"#{s.id} `{s.slug}` {s.mode} · **{s.status}**"
            + (f" · {format_rate(s.score)} {_unit(s.score_metric or 'gflops')}" if s.score else "")
            for s in stats.recent
        ]
        embed.add_field(name="Recent", value=clip("\n".join(lines), FIELD_LIMIT), inline=False)
    quota = " · ".join(f"{mode} {n}" for mode, n in stats.remaining.items())
    embed.add_field(name="Submissions available now", value=quota, inline=False)
    return fit(embed)


def render_quota(display_name: str, quotas: Sequence[ModeQuota]) -> discord.Embed:
    """`/quota`: each mode's submissions left now, when the next one comes back, and when the bucket is full."""
    embed = discord.Embed(title=clip(f"⏳ {display_name}: submissions left", TITLE_LIMIT), colour=COLOUR_INFO)
    for quota in quotas:
        embed.add_field(name=f"{quota.mode} ({describe_rate(quota)})", value=describe_quota(quota), inline=False)
    embed.set_footer(text="Each mode refills continuously, a little at a time.")
    return fit(embed)
