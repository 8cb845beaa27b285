"""The pages render what the store holds: the problem list, a board in rank order with its filters and pages, a
submission's result and chart, and pages that say what was not found."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.problems import ProblemSpec
from core.store.pool import READER_ROLE, create_pool
from core.submit.intake import submit
from problems.distributed.registry import distributed_problems
from problems.registry import builtin_problems
from tests.store.store_helpers import ROOMY, VECTOR_ADD, add_problems, finish, request, submit_scored
from tests.web.conftest import web_settings
from tests.web.web_helpers import HOSTILE, Seeded
from web.app import create_app
from web.session import SESSION_COOKIE


def board_rows(page: str) -> list[tuple[int, str]]:
    """(place, user) of the board's rows, in page order; each user is a link to their page."""
    board = page.split('<table class="board">', 1)[1].split("</table>", 1)[0]
    return [
        (int(place), name)
        for place, name in re.findall(r'<tr><td class=num>(\d+)</td><td><a href="/users/\d+">(.*?)</a></td>', board)
    ]


def board_users(page: str) -> list[str]:
    """The user column of the board's rows, in page order."""
    return [name for _, name in board_rows(page)]


async def get_text(client: TestClient, path: str, status: int = 200) -> str:
    response = await client.get(path)
    text = await response.text()
    assert response.status == status, (path, response.status, text[:500])
    assert response.content_type == "text/html"
    return text


async def test_the_problem_list_shows_each_problem_under_its_category_with_a_link(
    client: TestClient, seeded: Seeded
) -> None:
    page = await get_text(client, "/")
    # The two stored problems, and every problem of the library (the distributed ones too) but the two stored under
    # their former slugs.
    listed = len(builtin_problems()) - 2 + 2 + len(distributed_problems())
    assert f"{listed} problems" in page
    assert '<a href="/problems/vector_add">vector_add</a>' in page
    assert '<a href="/problems/matmul">matmul</a>' in page
    assert '<a href="/problems/softmax">softmax</a>' in page  # in the library, not in the store
    assert "/problems/vector-addition" not in page  # stored as vector_add, its former slug
    assert "<h2" in page and "Vector addition" in page


async def test_a_board_lists_each_users_best_in_rank_order(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/vector_add")
    assert board_users(page) == ["bob", "carol", "alice", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"]
    assert "h100 · float32 · cpu timing" in page
    assert f'href="/submissions/{seeded.ranked["bob"]}"' in page
    # The statement is there too: signature and formulas from the catalogue.
    assert "extern &quot;C&quot; void solution" in page and "FLOPs" in page


async def test_the_language_filter_keeps_only_that_languages_rows(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/vector_add?gpu=h100&dtype=float32&lang=cuda")
    assert board_users(page) == ["bob", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"]
    assert "cuda only" in page
    assert '<option value="cuda" selected>' in page


async def test_a_board_with_no_entries_says_so(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/matmul")
    assert "No ranked submissions yet" in page
    page = await get_text(client, "/problems/vector_add?gpu=a100")
    assert "No ranked submissions on this board yet" in page


@pytest.mark.parametrize("page_size", [2])
async def test_a_board_pages_on_with_next_and_previous_links(client: TestClient, seeded: Seeded) -> None:
    first = await get_text(client, "/problems/vector_add")
    assert board_users(first) == ["bob", "carol"]
    assert "page=2" in first and "previous" not in first
    second = await get_text(client, "/problems/vector_add?gpu=h100&dtype=float32&page=2")
    assert board_users(second) == ["alice", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"]
    assert "previous" in second and "next →" not in second


async def test_a_submission_page_shows_its_result_table_and_a_chart_but_no_code(
    client: TestClient, seeded: Seeded
) -> None:
    sid = seeded.ranked["bob"]
    page = await get_text(client, f"/submissions/{sid}")
    assert f"Submission #{sid}" in page
    for header in ("case", "median", "mean", "GFLOPS", "GB/s", "samples", "CV"):
        assert f"<th class=num>{header}</th>" in page or f"<th>{header}</th>" in page
    assert "<td>n=1024</td>" in page and "Score: 50 GFLOPS (geometric mean; arithmetic mean 50)</strong>" in page
    assert f'src="/submissions/{sid}/roofline.png?v=' in page
    assert "The code is not public" in page and "torch.add" not in page


async def test_the_roofline_route_serves_a_cacheable_png(client: TestClient, seeded: Seeded) -> None:
    path = f"/submissions/{seeded.ranked['carol']}/roofline.png"
    response = await client.get(path)
    body = await response.read()
    assert response.status == 200 and response.content_type == "image/png"
    assert body.startswith(b"\x89PNG\r\n\x1a\n") and len(body) > 5000
    assert response.headers["Cache-Control"] == "public, max-age=300"
    again = await client.get(path, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status == 304


async def test_a_failed_submission_shows_its_error_code_and_no_chart(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, f"/submissions/{seeded.failed}")
    assert "<code>wrong_answer</code>" in page and "roofline.png" not in page
    chart = await client.get(f"/submissions/{seeded.failed}/roofline.png")
    assert chart.status == 404 and "has no roofline chart" in await chart.text()


async def test_an_unknown_problem_is_a_404_that_names_it(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/vector_ad", status=404)
    assert "There is no problem called <code>vector_ad</code>" in page
    assert "Did you mean <code>vector_add</code>" in page


async def test_a_private_or_missing_submission_is_a_404_that_says_which(client: TestClient, seeded: Seeded) -> None:
    # A benchmark run is its submitter's own: it reads exactly as a submission that does not exist.
    private = await get_text(client, f"/submissions/{seeded.benchmark}", status=404)
    assert f"There is no public submission #{seeded.benchmark}" in private
    missing = await get_text(client, "/submissions/987654", status=404)
    assert "There is no public submission #987654" in missing


async def test_an_unknown_path_is_a_404_that_names_the_path(client: TestClient) -> None:
    page = await get_text(client, "/leaderboards/<b>", status=404)
    assert "There is no page at <code>/leaderboards/&lt;b&gt;</code>" in page


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("page=0", "is not a page number"),
        ("page=x", "is not a page number"),
        ("lang=fortran", "is not a language"),
        ("dtype=int4", "has no int4 boards"),
        ("gpu=H%20100", "is not a GPU type"),
        ("method=wallclock", "is not a timing method"),
    ],
)
async def test_a_bad_filter_is_a_400_that_says_what_to_fix(
    client: TestClient, seeded: Seeded, query: str, says: str
) -> None:
    page = await get_text(client, f"/problems/vector_add?{query}", status=400)
    assert says in page


async def test_a_hostile_display_name_is_escaped_everywhere_it_shows(client: TestClient, seeded: Seeded) -> None:
    board = await get_text(client, "/problems/vector_add")
    submission = await get_text(client, f"/submissions/{seeded.ranked[HOSTILE]}")
    for page in (board, submission):
        assert HOSTILE not in page and "<script>" not in page
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page


async def test_healthz_answers_ok_while_the_store_answers(client: TestClient) -> None:
    response = await client.get("/healthz")
    assert response.status == 200 and await response.text() == "ok"


async def test_the_problem_list_filters_by_category_and_difficulty(client: TestClient, seeded: Seeded) -> None:
    library = builtin_problems()
    easy_reductions = sorted(s for s, p in library.items() if p.tags[:1] == ("reduction",) and p.difficulty == "easy")
    page = await get_text(client, "/?category=reduction&difficulty=easy")
    listed = re.findall(r'<a href="/problems/([^"]+)">', page)
    assert sorted(listed) == easy_reductions and easy_reductions
    assert f"{len(easy_reductions)} problems" in page
    assert '<option value="reduction" selected>' in page and '<option value="easy" selected>' in page
    hard = await get_text(client, "/?difficulty=hard")
    assert 'class="easy"' not in hard and 'class="hard"' in hard
    refused = await get_text(client, "/?category=%3Cb%3E", status=400)
    assert "is not a category here" in refused and "<b>" not in refused


async def test_a_library_problem_the_store_lacks_has_its_page_and_no_board(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/softmax")
    assert "<h1>Softmax (softmax)</h1>" in page or "(softmax)</h1>" in page
    assert "No ranked submissions yet" in page and "extern &quot;C&quot; void solution" in page
    assert "(softmax)" in await get_text(client, "/problems/softmax?gpu=h100&dtype=float32")


async def test_a_former_slug_moves_for_good_to_the_current_one_with_its_query(
    client: TestClient, seeded: Seeded
) -> None:
    # conv2d is conv-2d's former slug (neither is in the store: the library has it).
    response = await client.get("/problems/conv2d?gpu=h100&page=2", allow_redirects=False)
    assert response.status == 301
    assert response.headers["Location"] == "/problems/conv-2d?gpu=h100&page=2"
    # vector_add is vector-addition's former slug, but the store has a problem under it: that one is shown.
    assert (await client.get("/problems/vector_add", allow_redirects=False)).status == 200


@pytest.mark.parametrize("page_size", [2])
async def test_equal_scores_share_a_place_across_pages(client: TestClient, pool: asyncpg.Pool) -> None:
    await add_problems(pool, VECTOR_ADD)
    for user, score in (("ann", 50.0), ("ben", 40.0), ("cat", 40.0), ("dan", 40.0), ("eve", 10.0)):
        await submit_scored(pool, user, score)
    first = await get_text(client, "/problems/vector_add")
    second = await get_text(client, "/problems/vector_add?page=2")
    third = await get_text(client, "/problems/vector_add?page=3")
    assert board_rows(first) == [(1, "ann"), (2, "ben")]
    assert board_rows(second) == [(2, "cat"), (2, "dan")]  # level with ben, on the page before
    assert board_rows(third) == [(5, "eve")]


async def test_a_board_shows_each_rows_runtime_and_links_its_competitor(
    client: TestClient, seeded: Seeded, pool: asyncpg.Pool
) -> None:
    await pool.execute(
        "UPDATE case_results SET runtime_median_us = 2500 WHERE kind = 'benchmark'"
        " AND job_id = (SELECT result_job_id FROM submissions WHERE id = $1)",
        seeded.ranked["bob"],
    )
    page = await get_text(client, "/problems/vector_add")
    bob_id = await pool.fetchval("SELECT id FROM users WHERE display_name = 'bob'")
    row = next(r for r in page.split("<tr>") if ">bob</a>" in r)
    assert f'<a href="/users/{bob_id}">bob</a>' in row and "<td class=num>2.500 ms</td>" in row
    assert "<th class=num>runtime</th>" in page and "1.000 µs" in page  # the others' one case took 1 µs


async def test_a_page_past_the_end_of_a_board_says_so_and_links_the_last(client: TestClient, seeded: Seeded) -> None:
    page = await get_text(client, "/problems/vector_add?gpu=h100&dtype=float32&page=7")
    assert "No ranked submissions on this board yet" not in page
    assert "Page 7 is past the end of this board&#x27;s 4 entries" in page
    assert "page=1" in page and ">page 1</a>" in page


async def test_a_hostile_problem_title_is_escaped_on_the_list_and_its_page(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    await add_problems(pool, ProblemSpec("evil", HOSTILE, 1, ("float32",)))
    receipt = await submit_scored(pool, HOSTILE, 5.0, slug="evil")
    user_id = await pool.fetchval("SELECT user_id FROM submissions WHERE id = $1", receipt.submission_id)
    for path in ("/", "/problems/evil", f"/submissions/{receipt.submission_id}", f"/users/{user_id}"):
        page = await get_text(client, path)
        assert HOSTILE not in page and "<script>" not in page, path
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page, path


async def test_a_page_is_kept_for_readers_not_signed_in_and_rendered_for_one_with_a_session_cookie(
    pool: asyncpg.Pool, db_dsn: str
) -> None:
    await add_problems(pool, VECTOR_ADD)
    async with create_pool(db_dsn, min_size=1, max_size=2, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn, board_cache_s=60.0), reader)
        async with TestClient(TestServer(app, host="127.0.0.1")) as kept_client:
            before = await get_text(kept_client, "/problems/vector_add")
            assert "No ranked submissions yet" in before
            await submit_scored(pool, "zoe", 12.0)
            # The same page, kept: a crowd reading it costs one rendering.
            assert await get_text(kept_client, "/problems/vector_add") == before
            # A reader with a session cookie gets a page rendered for them, with the new run on it.
            response = await kept_client.get("/problems/vector_add", cookies={SESSION_COOKIE: "not-a-token"})
            assert response.status == 200 and ">zoe</a>" in await response.text()
            # A page that is not found is not kept: it is rendered each time, and says so each time.
            assert (await kept_client.get("/problems/nope")).status == 404
            assert (await kept_client.get("/problems/nope")).status == 404


async def test_a_board_marks_the_entries_timed_under_an_older_protocol(
    client: TestClient, seeded: Seeded, pool: asyncpg.Pool
) -> None:
    from core.leaderboard import OLDER_PROTOCOL_MARK
    from runner.protocol import protocol_version

    await pool.execute("UPDATE submissions SET protocol = $1", protocol_version())
    page = await get_text(client, "/problems/vector_add")
    assert OLDER_PROTOCOL_MARK not in page and "older timing protocol" not in page
    await pool.execute("UPDATE submissions SET protocol = 'tp-000000000000' WHERE id = $1", seeded.ranked["bob"])
    page = await get_text(client, "/problems/vector_add")
    board = page.split('<table class="board">', 1)[1].split("</table>", 1)[0]
    assert board.count(OLDER_PROTOCOL_MARK) == 1
    assert f"older timing protocol than the current {protocol_version()}" in page


async def test_a_distributed_problems_board_says_its_ranks(client: TestClient, pool: asyncpg.Pool) -> None:
    """A distributed problem's board is keyed by its rank pool (`cpux2`); its caption says the ranks in words, and a
    one-device board says none."""
    await add_problems(pool, ProblemSpec.distributed(distributed_problems()["all-gather"]), VECTOR_ADD)
    ranked = replace(request("ann", slug="all-gather", gpu="cpux2"), world_size=2)
    await finish(pool, await submit(pool, ranked, ROOMY), 5.0)
    await submit_scored(pool, "ben", 40.0, gpu="cpu")
    page = await get_text(client, "/problems/all-gather?gpu=cpux2")
    assert board_users(page) == ["ann"]
    assert "cpux2 · 2 ranks · float32" in page
    assert "ranks ·" not in await get_text(client, "/problems/vector_add?gpu=cpu")


async def test_a_distributed_problem_is_described_and_listed_under_its_category(
    client: TestClient, pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """all-gather's page gives its world sizes and the signatures with rank, world size and group (or
    communicator); the library lists it under `distributed`, the stored problem and those of the library alike, and
    no problem is left without a description."""
    caplog.set_level(logging.WARNING, logger="core.browse")
    await add_problems(pool, ProblemSpec.distributed(distributed_problems()["all-gather"]), VECTOR_ADD)
    page = await get_text(client, "/problems/all-gather")
    assert "No description is available" not in page
    assert "easy</span> · distributed, collective" in page and "on 2, 4, 8 ranks" in page
    assert "int rank, int world_size, ncclComm_t comm" in page
    assert "rank: int, world_size: int, group: torch.distributed.ProcessGroup" in page
    assert "each sample&#x27;s time is its slowest rank&#x27;s, one board per world size" in page
    library = await get_text(client, "/")
    distributed = library.split('<h2 id="distributed">', 1)[1].split("<h2", 1)[0]
    for slug in distributed_problems():
        assert f'<a href="/problems/{slug}">{slug}</a>' in distributed, slug
    assert "/problems/all-gather" not in library.split('<h2 id="distributed">', 1)[0]
    only = await get_text(client, "/?category=distributed")
    assert sorted(re.findall(r'<a href="/problems/([^"]+)">', only)) == sorted(distributed_problems())
    assert not [r.getMessage() for r in caplog.records if "cannot be described" in r.getMessage()]
