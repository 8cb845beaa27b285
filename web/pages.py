"""The pages: pure functions from core data to HTML documents (`web.html` escapes every string they put in).

The figures come from `core.result_view`, as the bot's and the CLI's do, so that a result shows the same digits
wherever it is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import groupby

from core.browse import ProblemEntry
from core.leaderboard import LANGUAGES
from core.public import ProblemBoard, PublicSubmission
from core.result_view import CASE_HEADERS, case_rows, format_rate, method_label, summary
from core.store.leaderboard import ANY_LANGUAGE
from web.html import Html, esc, join, link, page, path_with, prose, table


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def _unit(metric: str | None) -> str:
    return "GFLOPS" if metric in (None, "gflops") else "GB/s"


def problem_path(slug: str) -> str:
    return f"/problems/{slug}"


def submission_path(submission_id: int) -> str:
    return f"/submissions/{submission_id}"


# -- the problem list ------------------------------------------------------------------------------------------


def problem_list_page(entries: Sequence[ProblemEntry]) -> str:
    """Every problem, by category, easiest first (what `/problems` shows in Discord)."""
    if not entries:
        return page("Problems", Html("<h1>Problems</h1><p>No problems yet.</p>"))
    sections = []
    for category, group in groupby(entries, key=lambda e: e.category):
        rows = [
            (
                Html(f'<span class="{esc(e.difficulty)}">{esc(e.difficulty)}</span>'),
                link(problem_path(e.stored.slug), e.stored.slug),
                e.stored.title,
                ", ".join(e.stored.dtypes),
                "" if e.stored.enabled else Html('<span class="closed">closed</span>'),
            )
            for e in group
        ]
        heading = Html(f'<h2 id="{esc(category)}">{esc(category)}</h2>')
        sections.append(heading + table(("difficulty", "problem", "title", "dtypes", ""), rows, css="problems"))
    intro = Html(f'<h1>Problems</h1><p class="meta">{len(entries)} problems, by category and difficulty.</p>')
    return page("Problems", intro + join(sections))


# -- one problem and its board ---------------------------------------------------------------------------------


def _summary(entry: ProblemEntry) -> Html:
    """What the problem is: difficulty, tags, version, dtypes and its description."""
    stored, info = entry.stored, entry.info
    closed = "" if stored.enabled else ' · <span class="closed">closed for submissions</span>'
    if info is None:
        return Html(f'<p class="meta">v{stored.version}{closed}</p><p>No description is available.</p>')
    meta = (
        f'<p class="meta"><span class="{esc(info.difficulty)}">{esc(info.difficulty)}</span> · '
        f"{esc(', '.join(info.tags) or 'general')} · v{stored.version} · dtypes {esc(', '.join(stored.dtypes))}"
        f"{closed}</p>"
    )
    return Html(meta + "".join(f"<p>{prose(p)}</p>" for p in info.description.split("\n\n") if p.strip()))


def _details(entry: ProblemEntry) -> Html:
    """How to solve it: the signatures, the formulas, the check and the test cases (below the board)."""
    stored, info = entry.stored, entry.info
    if info is None:
        return Html("")
    facts = [
        ("FLOPs", info.flops_formula),
        ("Bytes", info.bytes_formula),
        ("Ranked by", f"geometric-mean {_unit(stored.score_metric)} over the GPU cases (higher is better)"),
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


def _select(name: str, label: str, options: Sequence[str], chosen: str | None) -> Html:
    opts = "".join(f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(o)}</option>' for o in options)
    return Html(f'<label>{esc(label)}<select name="{esc(name)}">{opts}</select></label>')


def _filters(pb: ProblemBoard) -> Html:
    """A GET form: choosing a board needs no JavaScript."""
    gpus = sorted({b.gpu_type for b in pb.boards} | ({pb.gpu_type} if pb.gpu_type else set()))
    if not gpus:
        return Html("")
    fields = [
        _select("gpu", "GPU type", gpus, pb.gpu_type),
        _select("dtype", "dtype", list(pb.entry.stored.dtypes), pb.dtype),
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
    caption = Html(f'<p class="meta">{esc(f"{pb.gpu_type} · {pb.dtype}{method}{lang}")}</p>')
    if not board.rows:
        return head + caption + Html("<p>No ranked submissions on this board yet.</p>")
    rows = [
        (
            r.rank,
            r.display_name,
            format_rate(r.score),
            r.language,
            link(submission_path(r.submission_id), f"#{r.submission_id}"),
            _when(r.submitted_at),
        )
        for r in board.rows
    ]
    headers = ("rank", "user", board.score_unit, "language", "submission", "submitted")
    pager = []
    if lp.page > 0:
        pager.append(link(path_with(problem_path(slug), _board_params(pb, lp.page)), "← previous"))
    if lp.has_next:
        pager.append(link(path_with(problem_path(slug), _board_params(pb, lp.page + 2)), "next →"))
    others = [
        link(path_with(problem_path(slug), {"gpu": b.gpu_type, "dtype": b.dtype, "method": b.method}),
             f"{b.gpu_type} / {b.dtype} / {b.method} ({b.entries})")
        for b in pb.boards
        if (b.gpu_type, b.dtype, b.method) != (pb.gpu_type, pb.dtype, board.method)
    ]  # fmt: skip
    return Html(
        head
        + caption
        + table(headers, rows, numeric=(0, 2), css="board")
        + Html(f'<p class="pager">{join(pager)}</p>')
        + (Html("<p>Other boards: ") + join(others, ", ") + Html("</p>") if others else Html(""))
    )


def problem_page(pb: ProblemBoard) -> str:
    stored = pb.entry.stored
    title = f"{stored.title} ({stored.slug})"
    return page(title, Html(f"<h1>{esc(title)}</h1>") + _summary(pb.entry) + _board(pb) + _details(pb.entry))


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
        rows = [r.cells() for r in case_rows(result)]
        parts.append(table(CASE_HEADERS, rows, numeric=(1, 2, 3, 4, 5, 6), css="cases"))
    if ps.has_chart:
        src = esc(f"{submission_path(ps.submission.id)}/roofline.png?v={ps.chart_version}")
        parts.append(Html(f'<img class="chart" src="{src}" alt="Roofline chart of submission {ps.submission.id}">'))
    return Html("".join(parts))


def _code(ps: PublicSubmission) -> Html:
    if ps.source is None:
        return Html('<p class="note">The code is not public: it is revealed when the problem\'s contest ends.</p>')
    return Html(f"<pre>{esc(ps.source)}</pre>")


def submission_page(ps: PublicSubmission) -> str:
    title = f"Submission #{ps.submission.id}"
    body = Html(f"<h1>{esc(title)}</h1>") + _facts(ps) + Html("<h2>Result</h2>") + _result(ps)
    return page(title, body + Html("<h2>Code</h2>") + _code(ps))


# -- errors ----------------------------------------------------------------------------------------------------


def error_page(title: str, message: str) -> str:
    body = Html(f"<h1>{esc(title)}</h1><p>{prose(message)}</p><p>{link('/', 'All problems')}</p>")
    return page(title, body)
