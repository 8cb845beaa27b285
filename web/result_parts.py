"""The result page's parts beyond the public board's: what a run's author sees of it.

A signed-in reader's submission is read through the public API with their own token (`web.api_proxy`), so the API
decides what they may see: their own runs, private ones included (a test, a benchmark, a profile), with the code
and what the solution printed; anyone else's only as the reveal rules allow (contest code once its contest ended).
What nobody signed in may read falls back to the public page (`web.pages.submission_page`, `core.public`).

The figures come from `core.views.result`, `core.views.profile` and `core.views.output`, as the CLI's and the bot's
do, so that one result shows the same digits wherever it is read.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

import aiohttp
from aiohttp import web

from api.submission_models import SubmissionCode, SubmissionView
from contract.wire import SubmissionResult
from core.charts import render_roofline_png
from core.errors import SubmissionNotFoundError
from core.views.output import output_sections
from core.views.profile import LAUNCH_HEADERS, TRAFFIC_HEADERS, kernel_rows
from core.views.profile import summary as profile_summary
from core.views.result import CASE_HEADERS, case_rows, method_label, summary, timing_caveat
from runner.gpus import spec_for
from web.api_proxy import proxy_of
from web.html import Html, esc, join, link, page, prose, table
from web.pages import problem_path
from web.session import CONFIG as SIGNIN_CONFIG
from web.session import WebSession, signed_in

# Charts drawn for authors' own runs, by (user, submission, finish): matplotlib takes a few hundred milliseconds.
CHARTS_KEPT = 32
_CHARTS: web.AppKey[OrderedDict[tuple[int, int, str], bytes]] = web.AppKey("own_charts", OrderedDict)


@dataclass(frozen=True)
class OwnRun:
    """A submission as the API shows it to the signed-in reader, with its code where they may read it."""

    view: SubmissionView
    code: SubmissionCode | None


def own_chart_path(submission_id: int) -> str:
    return f"/submissions/{submission_id}/own-roofline.png"


async def _api_get(request: web.Request, session: WebSession, path: str) -> tuple[int, bytes]:
    proxy = proxy_of(request.app)
    assert proxy is not None and proxy.client is not None
    headers = {"Authorization": f"Bearer {session.token}", "Accept": "application/json"}
    timeout = aiohttp.ClientTimeout(total=proxy.timeout_s)
    async with proxy.client.get(proxy.url(path), headers=headers, timeout=timeout) as response:
        return response.status, await response.read()


async def own_run(request: web.Request, submission_id: int) -> OwnRun | None:
    """The submission as the API shows it to whoever is signed in, or None: nobody is, no API is set, it is not
    theirs to read (the API answers 404), or the API is out of reach (the public page is shown instead)."""
    proxy = proxy_of(request.app)
    if proxy is None or proxy.client is None or request.app.get(SIGNIN_CONFIG) is None:
        return None
    session = await signed_in(request)
    if session is None:
        return None
    try:
        status, body = await _api_get(request, session, f"/v1/submissions/{submission_id}")
        if status != 200:
            return None
        view = SubmissionView.model_validate_json(body)
        status, body = await _api_get(request, session, f"/v1/submissions/{submission_id}/code")
        code = SubmissionCode.model_validate_json(body) if status == 200 else None
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    return OwnRun(view, code)


# -- the parts -------------------------------------------------------------------------------------------------


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def _facts(view: SubmissionView) -> Html:
    rows: list[tuple[str, object]] = [
        ("problem", link(problem_path(view.problem), f"{view.problem} v{view.problem_version}")),
        ("user", view.owner),
        ("file", view.file_name),
        ("language", view.language),
        ("dtype", view.dtype),
        ("mode", view.mode),
        ("GPU type", view.gpu_type),
        ("device", view.result.device if view.result is not None else "-"),
        ("status", view.status),
        ("submitted", _when(view.created_at)),
    ]
    return table(("", ""), rows, css="facts")


def tests_table(result: SubmissionResult) -> Html:
    """Each test case's verdict, with what the check said where it failed."""
    rows = [(t.name, "passed" if t.passed else "failed", t.message or "") for t in result.tests]
    return table(("case", "verdict", "check"), rows, css="tests") if rows else Html("")


def error_part(result: SubmissionResult) -> Html:
    """The error in full, for the author: its code, message and log (a compiler's output quotes the source)."""
    if result.error is None:
        return Html("")
    parts = [Html("<p>Error <code>") + esc(result.error.code) + Html("</code>: ") + prose(result.error.message)]
    parts.append(Html("</p>"))
    if result.error.log:
        parts.append(Html('<pre class="error-log">') + esc(result.error.log) + Html("</pre>"))
    return join(parts)


def timing_part(result: SubmissionResult, chart_src: str | None, submission_id: int) -> Html:
    """The score, each timed case, and the roofline chart where one can be drawn."""
    if not result.timings:
        return Html("")
    s = summary(result)
    line = f"Score: {s.geomean} {s.unit} (geometric mean; arithmetic mean {s.mean})"
    if s.geomean_gbps not in (None, "-"):
        line += f", {s.geomean_gbps} GB/s"
    parts = [Html(f"<p><strong>{esc(line)}</strong></p>")]
    if (label := method_label(result)) is not None:
        parts.append(Html(f'<p class="meta">Timing: {prose(label)}.</p>'))
    if (caveat := timing_caveat(result)) is not None:
        parts.append(Html(f'<p class="meta host-bound">{esc(caveat)}.</p>'))
    parts.append(table(CASE_HEADERS, [r.cells() for r in case_rows(result)], numeric=(1, 2, 3, 4, 5, 6), css="cases"))
    if chart_src is not None and result.status == "passed":
        alt = f"Roofline chart of submission {submission_id}"
        parts.append(Html(f'<img class="chart" src="{esc(chart_src)}" alt="{esc(alt)}">'))
    return join(parts)


def profile_part(result: SubmissionResult) -> Html:
    """A profile run's figures: the summary lines, then each kernel's launch and traffic figures."""
    report = result.profile
    if report is None:
        return Html("")
    lines = table(("", ""), profile_summary(report).lines(), css="facts profile-summary")
    rows = kernel_rows(report)
    launch = table(LAUNCH_HEADERS, [r.launch_cells() for r in rows], numeric=(1, 2, 3, 4, 5, 6), css="profile")
    traffic = table(TRAFFIC_HEADERS, [r.traffic_cells() for r in rows], css="profile")
    return Html("<h2>Profile</h2>") + lines + launch + traffic


def output_part(result: SubmissionResult) -> Html:
    """What the solution printed, per phase and stream (bounded by the runner; control characters replaced)."""
    sections = output_sections(result.output)
    if not sections:
        return Html("")
    parts = [Html("<h2>What it printed</h2>")]
    for heading, body in sections:
        parts.append(Html('<h3 class="output">') + esc(heading) + Html('</h3><pre class="output">') + esc(body))
        parts.append(Html("</pre>"))
    return join(parts)


def result_part(result: SubmissionResult | None, submission_id: int, chart_src: str | None) -> Html:
    if result is None:
        return Html("<p>This submission is waiting for a runner; its result will show here.</p>")
    passed = sum(t.passed for t in result.tests)
    head = Html(f"<p>Tests: {passed} of {len(result.tests)} passed.</p>")
    return head + error_part(result) + tests_table(result) + timing_part(result, chart_src, submission_id)


def own_run_page(run: OwnRun) -> str:
    """The whole result page of a run the reader may read through the API: the facts, the result with every case,
    the chart, the profile, what it printed and the code."""
    view = run.view
    title = f"Submission #{view.id}"
    result = view.result
    body = Html(f"<h1>{esc(title)}</h1>") + _facts(view)
    if view.contests is not None:  # a ranked run on a contest's problem: what it counts for, or why not
        body += Html('<p class="meta contests">') + prose(view.contests.line) + Html("</p>")
    body += Html("<h2>Result</h2>")
    body += result_part(result, view.id, own_chart_path(view.id))
    if result is not None:
        body += profile_part(result) + output_part(result)
    code = Html(f"<pre>{esc(run.code.source)}</pre>") if run.code is not None else Html("<p>The code is not shown.</p>")
    return page(title, body + Html("<h2>Code</h2>") + code)


def public_extras(result: SubmissionResult | None, code_is_public: bool) -> Html:
    """What the public page adds for anyone: the per-case verdicts, and, where the code itself is public, what the
    solution printed (it can quote the code)."""
    if result is None:
        return Html("")
    return tests_table(result) + (output_part(result) if code_is_public else Html(""))


# -- the routes ------------------------------------------------------------------------------------------------


async def own_roofline(request: web.Request) -> web.Response:
    """The roofline chart of a run its reader may read through the API (their own private runs included)."""
    submission_id = int(request.match_info["submission_id"])
    run = await own_run(request, submission_id)
    result = run.view.result if run is not None else None
    if run is None or result is None or result.status != "passed" or not result.timings:
        raise SubmissionNotFoundError(f"Submission #{submission_id} has no roofline chart for you to see.")
    session = await signed_in(request)
    assert session is not None
    key = (session.user_id, submission_id, str(run.view.finished_at))
    charts = request.app[_CHARTS]
    png = charts.get(key)
    if png is None:
        png = await asyncio.to_thread(render_roofline_png, result, spec_for(result.device))
        charts[key] = png
        while len(charts) > CHARTS_KEPT:
            charts.popitem(last=False)
    return web.Response(body=png, content_type="image/png", headers={"Cache-Control": "private, max-age=300"})


def add_result_routes(app: web.Application) -> None:
    app[_CHARTS] = OrderedDict()
    app.router.add_get(r"/submissions/{submission_id:[0-9]{1,18}}/own-roofline.png", own_roofline)
