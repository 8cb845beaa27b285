"""The submit form of a problem's page (`web/editor.py`) and the result page of one's own run
(`web/result_parts.py`), read as HTML from the real web app, signed in through the fake Discord, with the API
service and the store real: what the form offers (every mode and language the API takes, the problem's dtypes, the
pools where there are several, the starter), what a signed-out reader gets instead, no inline script anywhere, the
starter route, the vendored script's address and cache lifetime, and who sees a private run's code and output."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
import asyncpg
from aiohttp.test_utils import TestClient

from contract.names import LANGUAGES, MODES
from contract.wire import PhaseOutput
from core import fleet
from core.problems import sync_problem
from core.results import record_result
from core.store import jobs
from core.views.profile import kernel_rows
from core.views.profile import summary as profile_summary
from tests.profile_fixture import profile_report
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.store_helpers import MATMUL, VECTOR_ADD, add_problems, result_for
from tests.web.signin_helpers import NELLY, ROY, sign_in, signin_stack
from tests.web.web_helpers import HOSTILE, SECRET, make_contest
from web.editor import static_version
from web.session import WebSession

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)  # " + HOSTILE.encode() + b"\n"


class Form(HTMLParser):
    """What a page holds that matters here: the submit form's attributes, its selects' options, the textarea's
    text, the scripts' sources, and every inline handler or inline script (there must be none)."""

    def __init__(self) -> None:
        super().__init__()
        self.form: dict[str, str | None] | None = None
        self.options: dict[str, list[tuple[str, bool]]] = {}
        self.textarea = ""
        self.scripts: list[str | None] = []
        self.inline: list[str] = []
        self._select: str | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.inline += [f"{tag} {name}" for name, _ in attrs if name.startswith("on") or name == "style"]
        if tag == "form" and found.get("id") == "submit-form":
            self.form = found
        elif tag == "select":
            self._select = found.get("name")
            self.options[self._select or ""] = []
        elif tag == "option" and self._select is not None:
            self.options[self._select].append((found.get("value") or "", "selected" in found))
        elif tag == "textarea":
            self._in = "textarea"
        elif tag == "script":
            self.scripts.append(found.get("src"))
            self._in = "script"

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        if tag in ("textarea", "script"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "textarea":
            self.textarea += data
        elif self._in == "script" and data.strip():
            self.inline.append(f"script {data[:40]!r}")


def bearer(session: WebSession) -> dict[str, str]:
    return {"Authorization": f"Bearer {session.token}"}


async def read_page(client: TestClient, path: str) -> tuple[str, Form]:
    response = await client.get(path)
    text = await response.text()
    assert response.status == 200, text[:500]
    parsed = Form()
    parsed.feed(text)
    return text, parsed


async def test_a_signed_in_reader_gets_the_form_with_every_choice_the_api_takes(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        _, page = await read_page(stack.client, "/problems/vector_add")
        assert page.form is not None, "no submit form"
        assert page.form["action"] == "/api/v1/submissions" and page.form["data-problem"] == "vector_add"
        assert page.form["data-csrf"] == session.csrf
        assert page.form["data-starter"] == "/problems/vector_add/starter"
        assert [v for v, _ in page.options["language"]] == list(LANGUAGES)
        assert [v for v, _ in page.options["mode"]] == list(MODES)
        assert [v for v, _ in page.options["dtype"]] == ["float32", "float16", "bfloat16"]
        # One pool (`cpu`): the API takes it by default, so there is nothing to choose.
        assert "gpu" not in page.options
        # The editor starts from the Python starter of the first dtype.
        assert "def solution(" in page.textarea and "torch" in page.textarea
        # Only scripts with a source, and this one under an address that changes with its content.
        digest = hashlib.sha256((STATIC / "editor.js").read_bytes()).hexdigest()[:12]
        assert page.scripts == [f"/static/editor.js?v={digest}"]
        assert page.inline == []

        # A second pool: now the reader chooses.
        await fleet.create_join_token(pool, "h100", lifetime=timedelta(hours=1))
        _, page = await read_page(stack.client, "/problems/vector_add")
        assert [v for v, _ in page.options["gpu"]] == ["cpu", "h100"]


async def test_a_signed_out_reader_is_offered_to_sign_in_and_nothing_when_sign_in_is_off(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        text, page = await read_page(stack.client, "/problems/vector_add")
        assert page.form is None and page.scripts == []
        assert 'href="/signin?next=%2Fproblems%2Fvector_add">Sign in to submit</a>' in text
    async with signin_stack(pool, db_dsn, web={"secret": None}) as stack:
        text, page = await read_page(stack.client, "/problems/vector_add")
        assert page.form is None and "Sign in to submit" not in text


async def test_the_starter_route_gives_each_languages_starter_and_says_what_is_wrong(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        cuda = await client.get("/problems/vector_add/starter", params={"lang": "cuda", "dtype": "float16"})
        assert cuda.status == 200 and cuda.content_type == "text/plain"
        text = await cuda.text()
        assert 'extern "C" void solution(' in text and "half" in text
        triton = await (await client.get("/problems/vector_add/starter", params={"lang": "triton"})).text()
        assert "import triton" in triton
        wrong = await client.get("/problems/vector_add/starter", params={"lang": "fortran"})
        assert wrong.status == 400 and "fortran" in await wrong.text()
        unknown = await client.get("/problems/no_such_problem/starter")
        assert unknown.status == 404
        # A problem of the library that no process has put in the store yet has its starter too.
        library = await client.get("/problems/relu/starter", params={"lang": "python"})
        assert library.status == 200 and "def solution(" in await library.text()
        # A problem a contest hides until its start has none: its signature would name it.
        await sync_problem(pool, SECRET)
        await make_contest(pool, "secret", ("vector_add", "secret_sum"), title="Secret round")  # starts in 2030
        hidden = await client.get("/problems/secret_sum/starter")
        assert hidden.status == 404 and "solution" not in await hidden.text()
        nul = await client.get("/problems/%00/starter")
        assert nul.status == 404


async def test_the_editor_script_is_served_for_a_year_under_its_digest(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        body = (STATIC / "editor.js").read_bytes()
        digest = hashlib.sha256(body).hexdigest()[:12]
        response = await stack.client.get(f"/static/editor.js?v={digest}")
        assert response.status == 200 and await response.read() == body
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.content_type in ("application/javascript", "text/javascript")
        # Another address of it (an old digest, none) is not kept: it would outlive the file's next build.
        for stale in (f"/static/editor.js?v={'0' * 12}", "/static/editor.js"):
            kept = await stack.client.get(stale)
            assert kept.status == 200 and "immutable" not in kept.headers.get("Cache-Control", ""), stale
        css = await stack.client.get(f"/static/editor.css?v={static_version('editor.css')}")
        assert css.status == 200 and css.content_type == "text/css" and "immutable" in css.headers["Cache-Control"]


async def test_a_private_run_is_shown_in_full_to_its_author_and_to_nobody_else(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        form = aiohttp.FormData()
        for key, value in (("problem", "vector_add"), ("mode", "benchmark")):
            form.add_field(key, value)
        form.add_field("file", SOURCE, filename="solution.py")
        accepted = await client.post("/api/v1/submissions", data=form, headers={"X-CSRF-Token": session.csrf})
        assert accepted.status == 202, await accepted.text()
        sub_id = (await accepted.json())["id"]
        job = (await jobs.jobs_of(pool, sub_id))[0]
        lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
        assert lease is not None and await jobs.set_running(pool, lease)
        spec = await jobs.job_spec(pool, job.id)
        assert spec is not None
        printed = PhaseOutput(phase="test", stdout=f"checking {HOSTILE}\n", stderr="")
        result = result_for(spec, 7.5).model_copy(update={"output": [printed]})
        assert await record_result(pool, lease, result, "runner-a")

        text, page = await read_page(client, f"/submissions/{sub_id}")
        assert page.inline == []
        assert "<h2>Result</h2>" in text and "Tests: 1 of 1 passed." in text
        assert re.search(r"<td>mode</td><td>benchmark</td>", text)
        # The case's figures, the chart of this run (the author's own address), what it printed, and the code;
        # each hostile string escaped.
        assert "<td>n=1024</td>" in text and "Score: 7.5 GFLOPS" in text
        assert f'src="/submissions/{sub_id}/own-roofline.png"' in text
        assert "stdout during the correctness tests" in text
        assert "checking &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in text
        assert "torch.add(a, b, out=c)  # &lt;script&gt;" in text and HOSTILE not in text
        chart = await client.get(f"/submissions/{sub_id}/own-roofline.png")
        assert chart.status == 200 and (await chart.read()).startswith(b"\x89PNG")
        assert chart.headers["Cache-Control"].startswith("private")

        # Another member, signed in, and a reader signed out: a benchmark run is nobody else's to read.
        await client.post("/signout", data={"csrf": session.csrf})
        signed_out = await client.get(f"/submissions/{sub_id}")
        assert signed_out.status == 404 and "checking" not in await signed_out.text()
        await sign_in(client, stack.fake, ROY)
        other = await client.get(f"/submissions/{sub_id}")
        assert other.status == 404 and "checking" not in await other.text()
        assert (await client.get(f"/submissions/{sub_id}/own-roofline.png")).status == 404


async def test_a_profile_runs_page_shows_its_authors_the_profiles_tables(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        form = aiohttp.FormData()
        await fleet.create_join_token(pool, "h100", lifetime=timedelta(hours=1))  # profiling needs a GPU pool
        for key, value in (("problem", "vector_add"), ("mode", "profile"), ("gpu", "h100")):
            form.add_field(key, value)
        form.add_field("file", SOURCE, filename="solution.py")
        accepted = await client.post("/api/v1/submissions", data=form, headers={"X-CSRF-Token": session.csrf})
        assert accepted.status == 202, await accepted.text()
        sub_id = (await accepted.json())["id"]
        job = (await jobs.jobs_of(pool, sub_id))[0]
        lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
        assert lease is not None and await jobs.set_running(pool, lease)
        spec = await jobs.job_spec(pool, job.id)
        assert spec is not None
        report = profile_report()
        result = result_for(spec, None).model_copy(update={"profile": report})
        assert await record_result(pool, lease, result, "runner-a")

        text, _ = await read_page(client, f"/submissions/{sub_id}")
        assert "<h2>Profile</h2>" in text
        # The summary's lines and each kernel's row, in the digits the CLI and Discord show.
        for label, line in profile_summary(report).lines():
            assert f"<td>{label}</td><td>{escape(line)}</td>" in text, label
        for row in kernel_rows(report):
            assert "<td>" + "</td><td>".join(escape(c) for c in row.traffic_cells()) + "</td>" in text
        assert 'own-roofline.png"' not in text  # a profile times nothing: no chart


async def test_a_ranked_run_on_a_contests_problem_says_what_it_counts_for(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool)  # on vector_add and matmul, h100/float32, starting in 2030
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        form = aiohttp.FormData()
        for key, value in (("problem", "vector_add"), ("mode", "ranked")):
            form.add_field(key, value)
        form.add_field("file", SOURCE, filename="solution.py")
        accepted = await client.post("/api/v1/submissions", data=form, headers={"X-CSRF-Token": session.csrf})
        assert accepted.status == 202, await accepted.text()
        sub_id = (await accepted.json())["id"]
        view = await (await stack.api.get(f"/v1/submissions/{sub_id}", headers=bearer(session))).json()
        line = view["contests"]["line"]
        assert line.startswith("this run counts for no contest: `spring`"), line
        text, _ = await read_page(client, f"/submissions/{sub_id}")
        # The API's line as the page writes a core message: escaped, its `code` spans as <code>.
        shown = escape(line).replace("`spring`", "<code>spring</code>")
        assert f'<p class="meta contests">{shown}</p>' in text, (line, text[:3000])
