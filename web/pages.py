"""The pages: pure functions from core data to HTML documents (`web.html` escapes every string they put in).

The figures come from `core.views.result`, as the bot's and the CLI's do, so that a result shows the same digits
wherever it is read.

Kept as one module: pure functions, one per page, over one set of shared fragments (headers, tables, charts); what
they share is most of the module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import TypeVar

from core.browse import ProblemEntry
from core.contests import BoardLine, ContestBoard
from core.contests.views import HistoryLine, RatingCard
from core.leaderboard import LANGUAGES, OLDER_PROTOCOL_MARK, older_protocol, older_protocol_note
from core.public import PlayerProfile, ProblemBoard, PublicContest, PublicSubmission, RatingPage
from core.rating import Rating, conservative_rating
from core.store.contests import BoardCell, RatedUser
from core.store.leaderboard import ANY_LANGUAGE
from core.store.pages import PLACES_COUNTED, BestResult, RecentRun
from core.submit.distributed import board_world_size
from core.views.result import (
    CASE_HEADERS,
    case_rows,
    format_duration_us,
    format_rate,
    method_label,
    summary,
    timing_caveat,
)
from problems.catalog import ProblemInfo
from web.html import Html, esc, join, link, page, path_with, prose, table

T = TypeVar("T")


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def _unit(metric: str | None) -> str:
    return "GFLOPS" if metric in (None, "gflops") else "GB/s"


def problem_path(slug: str) -> str:
    return f"/problems/{slug}"


def submission_path(submission_id: int) -> str:
    return f"/submissions/{submission_id}"


def player_path(user_id: int) -> str:
    return f"/users/{user_id}"


# -- the problem list ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProblemFilter:
    """What the problem list is narrowed to (None: any), and the choices the form offers."""

    category: str | None = None
    difficulty: str | None = None
    categories: tuple[str, ...] = ()
    difficulties: tuple[str, ...] = ()


def _problem_filters(chosen: ProblemFilter) -> Html:
    """A GET form: filtering needs no JavaScript."""
    any_choice = ("",)
    fields = [
        _select("category", "category", [*any_choice, *chosen.categories], chosen.category or "", lambda c: c or "any"),
        _select(
            "difficulty", "difficulty", [*any_choice, *chosen.difficulties], chosen.difficulty or "",
            lambda d: d or "any",
        ),
    ]  # fmt: skip
    return Html(f'<form class="filters" method="get" action="/">{"".join(fields)}<button>Show</button></form>')


def problem_list_page(entries: Sequence[ProblemEntry], chosen: ProblemFilter | None = None) -> str:
    """The problems `chosen` lets through, by category, easiest first (the library, as `arena problems` lists it)."""
    chosen = chosen or ProblemFilter()
    intro = Html("<h1>Problems</h1>") + (_problem_filters(chosen) if chosen.categories else Html(""))
    if not entries:
        narrowed = chosen.category is not None or chosen.difficulty is not None
        text = "No problem matches these filters." if narrowed else "No problems yet."
        return page("Problems", intro + Html(f"<p>{esc(text)}</p>"))
    sections = []
    for category, group in groupby(entries, key=lambda e: e.category):
        rows = [
            (
                Html(f'<span class="{esc(e.difficulty)}">{esc(e.difficulty)}</span>'),
                link(problem_path(e.stored.slug), e.stored.slug),
                e.stored.title,
                ", ".join(e.stored.dtype_labels),
                "" if e.stored.enabled else Html('<span class="closed">closed</span>'),
            )
            for e in group
        ]
        heading = Html(f'<h2 id="{esc(category)}">{esc(category)}</h2>')
        sections.append(heading + table(("difficulty", "problem", "title", "dtypes", ""), rows, css="problems"))
    count = Html(f'<p class="meta">{len(entries)} problems, by category and difficulty.</p>')
    return page("Problems", intro + count + join(sections))


# -- one problem and its board ---------------------------------------------------------------------------------


def _summary(entry: ProblemEntry) -> Html:
    """What the problem is: difficulty, tags, version, dtypes and its description."""
    stored, info = entry.stored, entry.info
    closed = "" if stored.enabled else ' · <span class="closed">closed for submissions</span>'
    if info is None:
        return Html(f'<p class="meta">v{stored.version}{closed}</p><p>No description is available.</p>')
    ranks = f" · on {esc(', '.join(map(str, info.world_sizes)))} ranks" if info.distributed else ""
    meta = (
        f'<p class="meta"><span class="{esc(info.difficulty)}">{esc(info.difficulty)}</span> · '
        f"{esc(', '.join(info.tags) or 'general')} · v{stored.version} · dtypes {esc(', '.join(stored.dtype_labels))}"
        f"{ranks}{closed}</p>"
    )
    return Html(meta + "".join(f"<p>{prose(p)}</p>" for p in info.description.split("\n\n") if p.strip()))


def _ranked_by(info: ProblemInfo, metric: str) -> str:
    """How the board orders entries; a distributed problem's sample takes its slowest rank's time."""
    text = f"geometric-mean {_unit(metric)} over the GPU cases (higher is better)"
    return f"{text}; each sample's time is its slowest rank's, one board per world size" if info.distributed else text


def _details(entry: ProblemEntry) -> Html:
    """How to solve it: the signatures, the formulas, the check and the test cases (below the board)."""
    stored, info = entry.stored, entry.info
    if info is None:
        return Html("")
    facts = [
        ("FLOPs", info.flops_formula),
        ("Bytes", info.bytes_formula),
        ("Ranked by", _ranked_by(info, stored.score_metric)),
        *([("Checked", info.checked)] if info.checked else []),
    ]
    parts = [
        Html(f"<h2>Signatures</h2><pre>{esc(info.c_signature)};\n\n{esc(info.python_signature)}: ...</pre>"),
        table(("", ""), facts, css="facts"),
    ]
    if info.gpu_cases:
        rows = [(c.name, c.shapes or "×".join(map(str, c.dims)), f"{c.gflop:.4g}", f"{c.megabytes:.4g}")
                for c in info.gpu_cases]  # fmt: skip
        parts.append(Html("<h2>Test cases (GPU)</h2>") + table(("case", "shapes", "GFLOP", "MB"), rows, numeric=(2, 3)))
    return join(parts)


def _select(
    name: str, label: str, options: Sequence[str], chosen: str | None, shown: Callable[[str], str] = str
) -> Html:
    """A drop-down whose values are `options` (what the query names) and whose texts are `shown(option)`."""
    opts = "".join(
        f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(shown(o))}</option>' for o in options
    )
    return Html(f'<label>{esc(label)}<select name="{esc(name)}">{opts}</select></label>')


def _filters(pb: ProblemBoard) -> Html:
    """A GET form: choosing a board needs no JavaScript."""
    gpus = sorted({b.gpu_type for b in pb.boards} | ({pb.gpu_type} if pb.gpu_type else set()))
    if not gpus:
        return Html("")
    fields = [
        _select("gpu", "GPU type", gpus, pb.gpu_type),
        # The values stay the dtype keys the boards are stored under; the texts are what they read as (uint32).
        _select("dtype", "dtype", list(pb.entry.stored.dtypes), pb.dtype, pb.entry.stored.data_type),
        _select("lang", "language", [ANY_LANGUAGE, *LANGUAGES], pb.language),
    ]
    action = esc(problem_path(pb.entry.stored.slug))
    return Html(f'<form class="filters" method="get" action="{action}">{"".join(fields)}<button>Show</button></form>')


def _board_params(pb: ProblemBoard, page_number: int | None = None) -> dict[str, object | None]:
    board = pb.page.board if pb.page is not None else None
    return {
        "gpu": pb.gpu_type,
        "dtype": pb.dtype,
        "lang": None if pb.language == ANY_LANGUAGE else pb.language,
        "method": board.method if board is not None else None,
        "page": page_number,
    }


def _board(pb: ProblemBoard) -> Html:
    slug = pb.entry.stored.slug
    head = Html("<h2>Leaderboard</h2>") + _filters(pb)
    if pb.page is None:
        return head + Html("<p>No ranked submissions yet. Submit one with mode <code>ranked</code>.</p>")
    lp, board = pb.page, pb.page.board
    lang = "" if board.language == ANY_LANGUAGE else f" · {board.language} only"
    method = f" · {board.method} timing" if board.method else ""
    dtype = board.problem.data_type(pb.dtype)
    # A distributed problem's board is keyed by its rank pool (`cpux2`): the caption says the ranks in words.
    ranks = board_world_size(slug, pb.gpu_type) if pb.gpu_type else 1
    world = f" · {ranks} ranks" if ranks > 1 else ""
    caption = Html(f'<p class="meta">{esc(f"{pb.gpu_type}{world} · {dtype}{method}{lang}")}</p>')
    if not board.rows:
        if lp.page > 0 and pb.size > 0:
            last = (pb.size - 1) // lp.page_size + 1
            back = link(path_with(problem_path(slug), _board_params(pb, last)), f"page {last}")
            past = f"Page {lp.page + 1} is past the end of this board's {pb.size} entries: the last is "
            return head + caption + Html(f'<p class="pager">{esc(past)}') + back + Html(".</p>")
        return head + caption + Html("<p>No ranked submissions on this board yet.</p>")
    rows = [
        (
            r.rank,
            link(player_path(r.user_id), r.display_name),
            format_rate(r.score) + (OLDER_PROTOCOL_MARK if older_protocol(r) else ""),
            _runtime(pb.runtimes_us.get(r.submission_id)),
            r.language,
            link(submission_path(r.submission_id), f"#{r.submission_id}"),
            _when(r.submitted_at),
        )
        for r in board.rows
    ]
    headers = ("rank", "user", board.score_unit, "runtime", "language", "submission", "submitted")
    pager = []
    if lp.page > 0:
        pager.append(link(path_with(problem_path(slug), _board_params(pb, lp.page)), "← previous"))
    if lp.has_next:
        pager.append(link(path_with(problem_path(slug), _board_params(pb, lp.page + 2)), "next →"))
    others = [
        link(path_with(problem_path(slug), {"gpu": b.gpu_type, "dtype": b.dtype, "method": b.method}),
             f"{b.gpu_type} / {board.problem.data_type(b.dtype)} / {b.method} ({b.entries})")
        for b in pb.boards
        if (b.gpu_type, b.dtype, b.method) != (pb.gpu_type, pb.dtype, board.method)
    ]  # fmt: skip
    return Html(
        head
        + caption
        + table(headers, rows, numeric=(0, 2, 3), css="board")
        + Html("".join(f'<p class="meta older-protocol">{esc(n)}</p>' for n in [older_protocol_note(board.rows)] if n))
        + Html(
            '<p class="meta">Equal scores share a place. The runtime is the geometric mean of the median time '
            "of each timed case; a submission's page has each case.</p>"
        )
        + Html(f'<p class="pager">{join(pager)}</p>')
        + (Html("<p>Other boards: ") + join(others, ", ") + Html("</p>") if others else Html(""))
    )


def _runtime(us: float | None) -> str:
    return "-" if us is None else format_duration_us(us)


def problem_page(pb: ProblemBoard, submit: str = "") -> str:
    """The problem, `submit` (`web.editor`'s form or sign-in link, as Html; a plain str is escaped), its board and
    how to solve it."""
    stored = pb.entry.stored
    title = f"{stored.title} ({stored.slug})"
    if not pb.entry.in_store:
        board = Html("<h2>Leaderboard</h2><p>No ranked submissions yet. Submit one with mode <code>ranked</code>.</p>")
        return page(title, Html(f"<h1>{esc(title)}</h1>") + _summary(pb.entry) + submit + board + _details(pb.entry))
    return page(title, Html(f"<h1>{esc(title)}</h1>") + _summary(pb.entry) + submit + _board(pb) + _details(pb.entry))


# -- one submission --------------------------------------------------------------------------------------------


def _facts(ps: PublicSubmission) -> Html:
    sub = ps.submission
    rows: list[tuple[str, object]] = [
        ("problem", link(problem_path(sub.slug), f"{ps.problem_title} ({sub.slug} v{sub.problem_version})")),
        ("user", ps.owner_name),
        ("file", sub.file_name),
        ("language", sub.language),
        ("dtype", sub.dtype),
        ("GPU type", sub.gpu_type),
        ("device", sub.device or "-"),
        ("status", sub.status + (" (invalidated by a moderator: not ranked)" if sub.invalidated else "")),
        ("submitted", _when(sub.created_at)),
    ]
    return table(("", ""), rows, css="facts")


def _result(ps: PublicSubmission) -> Html:
    result = ps.result
    if result is None:
        return Html("<p>This submission is waiting for a runner; its result will show here.</p>")
    parts: list[Html] = []
    passed = sum(t.passed for t in result.tests)
    parts.append(Html(f"<p>Tests: {passed} of {len(result.tests)} passed.</p>"))
    if result.error is not None:
        # Only the code: the message and log can quote the source (a compiler's output), which is not public.
        parts.append(Html(f"<p>Error: <code>{esc(result.error.code)}</code>. The submitter sees the details.</p>"))
    if result.timings:
        s = summary(result)
        line = f"Score: {s.geomean} {s.unit} (geometric mean; arithmetic mean {s.mean})"
        if s.geomean_gbps not in (None, "-"):
            line += f", {s.geomean_gbps} GB/s"
        parts.append(Html(f"<p><strong>{esc(line)}</strong></p>"))
        if (label := method_label(result)) is not None:
            parts.append(Html(f'<p class="meta">Timing: {prose(label)}.</p>'))
        if (caveat := timing_caveat(result)) is not None:
            parts.append(Html(f'<p class="meta host-bound">{esc(caveat)}.</p>'))
        rows = [r.cells() for r in case_rows(result)]
        parts.append(table(CASE_HEADERS, rows, numeric=(1, 2, 3, 4, 5, 6), css="cases"))
    if ps.has_chart:
        src = esc(f"{submission_path(ps.submission.id)}/roofline.png?v={ps.chart_version}")
        parts.append(Html(f'<img class="chart" src="{src}" alt="Roofline chart of submission {ps.submission.id}">'))
    return Html("".join(parts))


def _code(ps: PublicSubmission) -> Html:
    if ps.source is None:
        return Html(f'<p class="note">{esc(ps.code_note)}</p>')
    return Html(f"<pre>{esc(ps.source)}</pre>")


def submission_page(ps: PublicSubmission) -> str:
    title = f"Submission #{ps.submission.id}"
    body = Html(f"<h1>{esc(title)}</h1>") + _facts(ps) + Html("<h2>Result</h2>") + _result(ps)
    return page(title, body + Html("<h2>Code</h2>") + _code(ps))


# -- contests ---------------------------------------------------------------------------------------------------


def contest_path(slug: str, phase: str = "contest") -> str:
    return f"/contests/{slug}" + ("/upsolve" if phase == "upsolve" else "")


def _time(at: datetime) -> Html:
    """A moment in UTC, machine-readable in `datetime` (ISO 8601) and readable in the text."""
    return Html(f'<time datetime="{esc(at.strftime("%Y-%m-%dT%H:%M:%SZ"))}">{esc(_when(at))}</time>')


def _state(state: str) -> Html:
    return Html(f'<span class="{esc(state)}">{esc(state)}</span>')


def contest_list_page(items: Sequence[PublicContest]) -> str:
    """Every contest, the latest start first: when it runs, where it stands, who may enter."""
    intro = Html("<h1>Contests</h1>")
    if not items:
        return page("Contests", intro + Html("<p>No contests yet.</p>"))
    rows = [
        (
            link(contest_path(pc.contest.slug), pc.contest.title),
            _time(pc.contest.starts_at),
            _time(pc.contest.ends_at),
            _state(pc.state),
            pc.contest.visibility.replace("_", "-"),
            link(contest_path(pc.contest.slug, "upsolve"), "upsolve board"),
        )
        for pc in items
    ]
    headers = ("contest", "starts (UTC)", "ends (UTC)", "state", "visibility", "")
    note = Html('<p class="meta">Times are UTC. Each contest has a board of the runs sent while it runs, frozen at '
                "the end, and an upsolve board of those sent after.</p>")  # fmt: skip
    return page("Contests", intro + note + table(headers, rows, css="contests"))


SCORING = (
    "Scoring (rank sum): in each column, a problem on one target, every entrant's best ranked run is ranked 1, 2, "
    "3, ... by score; an entrant's total is the sum of their ranks, counting (entrants in the column + 1) where "
    "they have no run. Lower is better, and equal totals share a place."
)


def _cell(cell: BoardCell, linked: bool) -> Html:
    """An entrant's rank in a column and their score there (a link to the run once the contest is over)."""
    if cell.submission_id is None or cell.score is None:
        return Html(f'<span class="penalty" title="no run: entrants + 1">{cell.rank} · -</span>')
    score = format_rate(cell.score)
    shown = link(submission_path(cell.submission_id), score) if linked else esc(score)
    return Html(f"{cell.rank} · ") + shown


def _pager(path: str, page_number: int, page_size: int, shown: int, total: int, what: str) -> Html:
    """Where a page (from 0) of `shown` lines is in the whole of `total`, with links to the pages before and after;
    a page past the end says so and links the last page."""
    if total == 0:
        return Html("")
    start = page_number * page_size
    if shown == 0:
        last = (total - 1) // page_size + 1
        back = link(path_with(path, {"page": last}), f"page {last}")
        return Html(f'<p class="pager">Page {page_number + 1} is past the end of these {total} {esc(what)}: '
                    "the last is ") + back + Html(".</p>")  # fmt: skip
    links = [Html(esc(f"{what} {start + 1}–{start + shown} of {total}"))]
    if page_number > 0:
        links.append(link(path_with(path, {"page": page_number}), "← previous"))
    if start + page_size < total:
        links.append(link(path_with(path, {"page": page_number + 2}), "next →"))
    return Html('<p class="pager">') + join(links, " · ") + Html("</p>")


def paged(lines: Sequence[T], path: str, page_number: int, page_size: int, what: str) -> tuple[Sequence[T], Html]:
    """One page of `lines` (pages counted from 0) and its pager (`_pager`)."""
    start = page_number * page_size
    shown = lines[start : start + page_size]
    return shown, _pager(path, page_number, page_size, len(shown), len(lines), what)


def _board_table(board: ContestBoard, lines: Sequence[BoardLine], linked: bool) -> Html:
    columns = [Html(f"{link(problem_path(c.slug), c.slug)} {esc(f'{c.gpu_type}/{c.dtype}')}") for c in board.columns]
    headers = ("place", "user", "total", *columns)
    rows = [
        (
            line.place,
            link(player_path(line.user_id), line.display_name),
            line.total,
            *(_cell(cell, linked) for cell in line.cells),
        )
        for line in lines
    ]
    numeric = (0, 2, *range(3, 3 + len(columns)))
    return table(headers, rows, numeric=numeric, css="contest-board")


def _podium(lines: Sequence[BoardLine]) -> Html:
    """Places 1 to 3, each line with its own place number: entrants who tie share one ("1.", "2.", "2.")."""
    items = "".join(f'<li value="{line.place}">{esc(line.display_name)} (total {line.total})</li>' for line in lines)
    return Html(f'<h2>Podium</h2><ol class="podium">{items}</ol>') if items else Html("")


def _contest_meta(pc: PublicContest) -> Html:
    c, targets = pc.contest, ", ".join(f"{t.gpu_type}/{t.dtype}" for t in pc.view.targets)
    meta = Html(
        f'<p class="meta">{_state(pc.state)} · {esc(c.visibility.replace("_", "-"))} · from {_time(c.starts_at)} '
        f"to {_time(c.ends_at)} · targets {esc(targets)}</p>"
    )
    if c.visibility == "invite_only":
        meta += Html("<p>Invite-only: the boards rank invited entrants only.</p>")
    problems = join((link(problem_path(p.slug), p.title) for p in pc.problems), ", ")
    hidden = len(pc.view.problems) - len(pc.problems)
    more = f" {hidden} more {'is' if hidden == 1 else 'are'} revealed at the start." if hidden else ""
    meta += Html("<p>Problems: ") + (problems or Html("none shown yet.")) + Html(f"{esc(more)}</p>")
    return meta + Html(f"<p>{esc(SCORING)}</p>")


def _contest_board(pc: PublicContest, page_number: int, page_size: int) -> Html:
    board, c = pc.board, pc.contest
    tabs = join(
        [
            esc("contest board") if pc.phase == "contest" else link(contest_path(c.slug), "contest board"),
            esc("upsolve board") if pc.phase == "upsolve" else link(contest_path(c.slug, "upsolve"), "upsolve board"),
        ],
        " · ",
    )
    parts = [Html(f'<p class="pager">{tabs}</p>')]
    if board is None:
        parts.append(Html("<p>The contest starts at ") + _time(c.starts_at) + Html("; its board opens then.</p>"))
        return join(parts)
    if pc.phase == "upsolve":
        parts.append(Html("<h2>Upsolve board</h2><p class=\"meta\">Ranked runs sent after the end, ranked as in the "
                          "contest; they never change the contest board or the ratings.</p>"))  # fmt: skip
    elif board.frozen:
        assert c.frozen_at is not None
        parts.append(_podium(board.podium))
        parts.append(Html('<h2>Final board</h2><p class="meta">Frozen at ') + _time(c.frozen_at) + Html(".</p>"))
    else:
        parts.append(Html("<h2>Live board</h2><p class=\"meta\">It follows every result until it freezes after "
                          "the end.</p>"))  # fmt: skip
    if not board.lines:
        parts.append(Html("<p>No ranked run counts on this board yet.</p>"))
        return join(parts)
    lines, pager = paged(board.lines, contest_path(c.slug, pc.phase), page_number, page_size, "entrants")
    if lines:
        parts.append(_board_table(board, lines, pc.over))
    parts.append(pager)
    if pc.over and pc.phase == "contest":
        parts.append(Html('<p class="note">A score links to its run: the code of contest runs is public now, '
                          "unless its author chose to keep it private.</p>"))  # fmt: skip
    return join(parts)


def contest_page(pc: PublicContest, page_number: int = 0, page_size: int = 50, as_of: datetime | None = None) -> str:
    """A contest: when, what and how it is scored, then one page of its contest or upsolve board (and the podium
    once frozen); `as_of`, when the board was computed."""
    c = pc.contest
    title = f"{c.title} ({c.slug})" + (" · upsolve" if pc.phase == "upsolve" else "")
    board = _contest_board(pc, page_number, page_size)
    if as_of is not None:
        board += Html('<p class="meta">This page as of ') + _time(as_of) + Html(".</p>")
    return page(title, Html(f"<h1>{esc(f'{c.title} ({c.slug})')}</h1>") + _contest_meta(pc) + board)


# Size of the rating chart's drawing, in SVG units (it scales to the page's width).
CHART_W, CHART_H, CHART_PAD = 640, 220, 36


def rating_chart(history: Sequence[HistoryLine]) -> Html:
    """The rating after each rated contest as an inline SVG line chart (no script, no style attribute: the CSP
    allows neither; its look comes from the style sheet). Empty with fewer than one point."""
    if not history:
        return Html("")
    values = [history[0].rating_before, *(h.rating_after for h in history)]
    low, high = min(values), max(values)
    span = max(high - low, 1.0)
    step = (CHART_W - 2 * CHART_PAD) / max(len(values) - 1, 1)

    def point(i: int, value: float) -> tuple[float, float]:
        return CHART_PAD + i * step, CHART_H - CHART_PAD - (value - low) / span * (CHART_H - 2 * CHART_PAD)

    points = [point(i, v) for i, v in enumerate(values)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    labels = ["start", *(h.contest_title for h in history)]
    dots = "".join(
        f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="3.5"><title>{esc(label)}: {v:.0f}</title></circle>'
        for (x, y), v, label in zip(points, values, labels, strict=True)
    )
    bottom, left = CHART_H - CHART_PAD, CHART_PAD
    axes = (
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{CHART_W - CHART_PAD}" y2="{bottom}"/>'
        f'<line class="axis" x1="{left}" y1="{CHART_PAD}" x2="{left}" y2="{bottom}"/>'
        f'<text x="4" y="{CHART_PAD + 4}">{high:.0f}</text><text x="4" y="{bottom + 4}">{low:.0f}</text>'
    )
    title = f"Rating after each of {len(history)} rated contests, from {values[0]:.0f} to {values[-1]:.0f}"
    return Html(
        f'<figure class="chart"><svg class="history" viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>{axes}'
        f'<polyline class="line" points="{path}"/>{dots}</svg></figure>'
    )


def _rating(card: RatingCard) -> Html:
    current, conservative = card.current, card.conservative
    if current is None or conservative is None:
        return Html("<h2>Rating</h2><p>Not rated yet: a rating comes with the first contest that freezes with this "
                    "player on its board.</p>")  # fmt: skip
    facts = (
        ("rating", f"{current.rating:.0f} ± {current.rd:.0f} (RD)"),
        ("conservative", f"{conservative:.0f} (rating − 2·RD, what the rating table orders by)"),
        ("rated contests", current.contests),
    )
    rows = [
        (link(contest_path(h.contest_slug), h.contest_title), h.place, f"{h.rating_before:.0f}",
         f"{h.rating_after:.0f}", f"{h.delta:+.0f}")
        for h in reversed(card.history)
    ]  # fmt: skip
    history = table(("contest", "place", "before", "after", "change"), rows, numeric=(1, 2, 3, 4), css="history")
    return (
        Html("<h2>Rating</h2>")
        + table(("", ""), facts, css="facts")
        + rating_chart(card.history)
        + Html("<h2>Rated contests</h2>")
        + history
    )


def _place(b: BestResult) -> str:
    shown = f"{PLACES_COUNTED:,}+" if b.place > PLACES_COUNTED else str(b.place)
    return f"{shown} of {b.entries:,}"


def _best(best: Sequence[BestResult]) -> Html:
    head = Html('<h2>Best result per problem</h2><p class="meta">On the fullest board of each problem this player is '
                "on; equal scores share a place.</p>")  # fmt: skip
    if not best:
        return head + Html("<p>No ranked result on any board yet.</p>")
    rows = [
        (
            link(path_with(problem_path(b.slug), {"gpu": b.gpu_type, "dtype": b.dtype, "method": b.method}), b.slug),
            f"{b.gpu_type} · {b.dtype} · {b.method}" + (f" (and {b.boards - 1} more)" if b.boards > 1 else ""),
            _place(b),
            f"{format_rate(b.score)} {_unit(b.score_metric)}",
            link(submission_path(b.submission_id), f"#{b.submission_id}"),
            _when(b.submitted_at),
        )
        for b in best
    ]
    headers = ("problem", "board", "place", "score", "submission", "submitted")
    return head + table(headers, rows, numeric=(2, 3), css="best")


def _recent(profile: PlayerProfile) -> Html:
    head = Html("<h2>Recent submissions</h2>")
    if profile.own:
        head += Html('<p class="meta">Your runs of every mode: test, benchmark and profile runs, and the code of '
                     "each, are yours alone. Others see your ranked runs only.</p>")  # fmt: skip
    if not profile.recent:
        return head + Html("<p>No submissions to show.</p>")

    def shown_id(r: RecentRun) -> Html:
        # A ranked run has a public page; another mode's is its author's, read through the API or the CLI.
        return link(submission_path(r.id), f"#{r.id}") if r.mode == "ranked" else esc(f"#{r.id}")

    rows = [
        (
            shown_id(r),
            link(problem_path(r.slug), r.slug),
            r.mode,
            r.status + (" (invalidated)" if r.invalidated else ""),
            "-" if r.score is None else f"{format_rate(r.score)} {_unit(r.score_metric)}",
            f"{r.gpu_type} · {r.dtype} · {r.language}",
            _when(r.created_at),
        )
        for r in profile.recent
    ]
    headers = ("submission", "problem", "mode", "status", "score", "on", "submitted")
    return head + table(headers, rows, numeric=(4,), css="recent")


def player_page(profile: PlayerProfile) -> str:
    """A competitor's page: rating and its chart and history, best result on each board, latest submissions."""
    card = profile.card
    head = Html(f"<h1>{esc(card.display_name)}</h1>")
    body = head + _rating(card) + _best(profile.best) + _recent(profile)
    return page(f"{card.display_name} · competitor", body + Html('<p><a href="/ratings">All ratings</a></p>'))


def _conservative(user: RatedUser) -> float:
    return conservative_rating(Rating(user.rating, user.rd, user.volatility))


def ratings_page(rp: RatingPage) -> str:
    """One page of the global rating table, by the conservative rating; equal ones share a place."""
    intro = Html(
        '<h1>Ratings</h1><p class="meta">Ratings use Elo-MMR (Ebtekar and Liu, 2021): each rated contest estimates '
        "every entrant's performance from their place against everyone's rating, and counts it as one noisy "
        "observation of their skill, while the RD (the rating's uncertainty, 350 for a newcomer) grows a little "
        "with every rated contest a player sits out. The table is ordered by rating − 2·RD, a value the "
        "player's skill is very likely above, so a player climbs by placing well and by playing often enough for "
        "their RD to shrink.</p>"
    )
    if rp.total == 0:
        return page("Ratings", intro + Html("<p>Nobody is rated yet: ratings come when a contest freezes.</p>"))
    pager = _pager("/ratings", rp.page, rp.page_size, len(rp.rows), rp.total, "players")
    rows = [
        (line.place, link(player_path(line.user.user_id), line.user.display_name),
         f"{_conservative(line.user):.0f}", f"{line.user.rating:.0f}", f"{line.user.rd:.0f}",
         line.user.contests)
        for line in rp.rows
    ]  # fmt: skip
    headers = ("place", "user", "conservative", "rating", "RD", "contests")
    ratings = table(headers, rows, numeric=(0, 2, 3, 4, 5), css="ratings") if rows else Html("")
    return page("Ratings", intro + ratings + pager)


# -- errors ----------------------------------------------------------------------------------------------------


def error_page(title: str, message: str) -> str:
    body = Html(f"<h1>{esc(title)}</h1><p>{prose(message)}</p><p>{link('/', 'All problems')}</p>")
    return page(title, body)
