"""The contest pages render the core's contest data on an injected clock: the list, the live and the frozen board
with its podium, the upsolve board, the rating table after a freeze, contest code shown only after the end, and
problems a contest hides absent until its start."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import asyncpg
from aiohttp.test_utils import TestClient, TestServer

from core.contests import ContestBoard, cancel_contest, contest_board, freeze_if_due, invite, set_code_reveal
from core.moderation import Actor, ban_user
from core.problems import sync_problem
from core.rating import Rating, conservative_rating
from core.store import contests
from core.store.pool import READER_ROLE, create_pool
from tests.store.store_helpers import MATMUL, MOD, VECTOR_ADD, add_problems
from tests.web.conftest import web_settings
from tests.web.test_pages import get_text
from tests.web.web_helpers import (
    CREATED,
    END,
    FROZEN_AT,
    HOSTILE,
    SECRET,
    START,
    Clock,
    make_contest,
    ranked_at,
    seed_contest,
)
from web.app import create_app

ESCAPED_HOSTILE = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"


def board_rows(page: str) -> list[list[str]]:
    """The contest board's rows as text (tags dropped, entities read), in page order."""
    board = page.split('<table class="contest-board">', 1)[1].split("</table>", 1)[0]
    body = board.split("<tbody>", 1)[1]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def core_rows(board: ContestBoard) -> list[list[str]]:
    """What the page should show for the core's board: place, user, total, then rank · score per column."""
    return [
        [str(line.place), line.display_name, str(line.total)]
        + [f"{c.rank} · {'-' if c.score is None else f'{c.score:g}'}" for c in line.cells]
        for line in board.lines
    ]


async def test_the_running_contests_board_is_the_cores_live_board_with_a_column_per_problem_and_target(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    seeded = await seed_contest(pool)
    clock.at = START + timedelta(seconds=30)
    page = await get_text(client, "/contests/spring")
    assert "<h1>Spring sprint (spring)</h1>" in page and '<span class="running">running</span>' in page
    assert board_rows(page) == core_rows(await contest_board(pool, "spring"))
    assert board_rows(page) == [
        ["1", "bob", "2", "1 · 80", "1 · 40"],
        ["2", "alice", "4", "2 · 50", "2 · 30"],
        ["3", "carol", "6", "3 · 40", "3 · -"],
        ["4", HOSTILE, "7", "4 · 20", "3 · -"],
    ]
    assert '<a href="/problems/vector_add">vector_add</a> h100/float32</th>' in page
    assert "Scoring (rank sum)" in page and "Lower is better" in page and "Live board" in page
    # While it runs, the board links no run (the problem boards do; the contest page waits for the end).
    assert f"/submissions/{seeded.runs[('bob', 'vector_add')]}" not in page
    assert HOSTILE not in page and ESCAPED_HOSTILE in page
    assert "Podium" not in page


async def test_a_frozen_board_shows_the_podium_and_links_each_score_to_its_run(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    seeded = await seed_contest(pool, freeze=True)
    clock.at = FROZEN_AT + timedelta(minutes=5)
    page = await get_text(client, "/contests/spring")
    frozen = await contest_board(pool, "spring")
    assert frozen.frozen and board_rows(page) == core_rows(frozen)
    assert '<span class="frozen">frozen</span>' in page and "Final board" in page
    podium = page.split('<ol class="podium">', 1)[1].split("</ol>", 1)[0]
    assert podium == (
        '<li value="1">bob (total 2)</li><li value="2">alice (total 4)</li><li value="3">carol (total 6)</li>'
    )
    assert f'<a href="/submissions/{seeded.runs[("bob", "vector_add")]}">80</a>' in page
    assert f'<time datetime="{FROZEN_AT:%Y-%m-%dT%H:%M:%SZ}">' in page


async def test_the_upsolve_board_ranks_only_runs_sent_after_the_end(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    seeded = await seed_contest(pool, freeze=True)
    clock.at = END + timedelta(minutes=5)
    page = await get_text(client, "/contests/spring/upsolve")
    assert "<h2>Upsolve board</h2>" in page
    assert board_rows(page) == core_rows(await contest_board(pool, "spring", "upsolve"))
    assert board_rows(page) == [["1", "carol", "2", "1 · 500", "1 · -"]]
    assert f'<a href="/submissions/{seeded.upsolve}">500</a>' in page
    assert '<a href="/contests/spring">contest board</a>' in page


async def test_the_ratings_page_lists_the_rated_by_conservative_rating_after_a_freeze(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    empty = await get_text(client, "/ratings")
    assert "Nobody is rated yet" in empty
    await seed_contest(pool, freeze=True)
    page = await get_text(client, "/ratings")
    table = page.split('<table class="ratings">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(
        r'<tr><td class=num>(\d+)</td><td><a href="/users/\d+">(.*?)</a></td><td class=num>(-?\d+)</td>', table
    )
    stored = await contests.ratings_of(pool, [r["id"] for r in await pool.fetch("SELECT id FROM users")])
    names = {r["id"]: r["display_name"] for r in await pool.fetch("SELECT id, display_name FROM users")}
    expected = sorted(
        ((conservative_rating(Rating(r.rating, r.rd, r.volatility)), names[r.user_id]) for r in stored.values()),
        key=lambda cn: -cn[0],
    )
    assert [(name, int(value)) for _, name, value in rows] == [
        (html.escape(name), round(value)) for value, name in expected
    ]
    assert [name for _, name, _ in rows] == ["bob", "alice", "carol", ESCAPED_HOSTILE]
    assert "<th class=num>RD</th>" in page and "<th class=num>contests</th>" in page


async def test_contest_code_shows_on_its_submission_page_only_after_the_end_and_with_the_authors_leave(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    seeded = await seed_contest(pool)
    alice_cuda = f"/submissions/{seeded.runs[('alice', 'vector_add')]}"
    clock.at = END - timedelta(seconds=1)
    during = await get_text(client, alice_cuda)
    assert "The code is not public" in during and "void solution" not in during
    # The note says what applies to this run: a contest run, revealed at that contest's end.
    assert f"revealed when the contest it was sent to ends, at {END:%Y-%m-%d %H:%M} UTC" in during
    clock.at = END
    after = await get_text(client, alice_cuda)
    assert "<pre>extern &quot;C&quot; void solution(const float* a" in after
    assert "The code is not public" not in after
    # A run before the start is no contest code: it stays private.
    practice = await get_text(client, f"/submissions/{seeded.before_start}")
    assert "The code is not public" in practice
    assert "counted for no contest" in practice and "revealed when the contest" not in practice
    await set_code_reveal(pool, Actor("discord:alice", "alice"), False)
    opted_out = await get_text(client, alice_cuda)
    assert "The code is not public" in opted_out and "void solution" not in opted_out
    assert "its author keeps the code of their contest runs private" in opted_out


async def test_a_problem_a_contest_hides_is_absent_from_every_page_until_its_start(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await add_problems(pool)
    await sync_problem(pool, SECRET)
    await make_contest(pool, "secret", ("vector_add", "secret_sum"), title="Secret round")
    clock.at = START - timedelta(seconds=1)
    listing = await get_text(client, "/")
    assert "secret_sum" not in listing and "vector_add" in listing
    hidden = await get_text(client, "/problems/secret_sum", status=404)
    assert "There is no problem called <code>secret_sum</code>" in hidden
    near = await get_text(client, "/problems/secret_su", status=404)
    assert "secret_sum" not in near, "no suggestion names a hidden problem"
    contest = await get_text(client, "/contests/secret")
    assert "secret_sum" not in contest and "Secret sum" not in contest
    assert "1 more is revealed at the start" in contest and "its board opens then" in contest

    clock.at = START
    assert "secret_sum" in await get_text(client, "/")
    assert "Secret sum (secret_sum)" in await get_text(client, "/problems/secret_sum")
    opened = await get_text(client, "/contests/secret")
    assert '<a href="/problems/secret_sum">Secret sum</a>' in opened and "revealed at the start" not in opened


async def test_the_contest_list_gives_utc_times_state_and_visibility_and_an_invite_only_board_ranks_the_invited(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool)
    later = START + timedelta(days=1)
    await make_contest(pool, "invited", ("vector_add",), title="<i>Invited</i>", visibility="invite_only",
                       starts_at=later, ends_at=later + timedelta(hours=1))  # fmt: skip
    await make_contest(pool, "called-off", ("vector_add",), title="Called off")
    await cancel_contest(pool, MOD, "called-off", "wrong problem", now=CREATED)
    await invite(pool, MOD, "invited", [Actor("discord:alice", "alice")])
    clock.at = START + timedelta(seconds=30)
    page = await get_text(client, "/contests")
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr>")[1:]
    assert len(rows) == 3
    assert '<a href="/contests/invited">&lt;i&gt;Invited&lt;/i&gt;</a>' in rows[0]
    assert '<span class="upcoming">upcoming</span>' in rows[0] and "invite-only" in rows[0]
    assert '<a href="/contests/spring">Spring sprint</a>' in "".join(rows[1:])
    assert '<time datetime="2030-03-01T12:00:00Z">2030-03-01 12:00 UTC</time>' in page
    assert '<time datetime="2030-03-01T12:01:00Z">2030-03-01 12:01 UTC</time>' in page
    assert '<span class="running">running</span>' in page and '<span class="cancelled">cancelled</span>' in page

    await ranked_at(pool, "alice", 10.0, later + timedelta(seconds=5))
    await ranked_at(pool, "bob", 90.0, later + timedelta(seconds=6))
    clock.at = later + timedelta(seconds=30)
    board = await get_text(client, "/contests/invited")
    assert "Invite-only: the boards rank invited entrants only." in board
    assert board_rows(board) == [["1", "alice", "1", "1 · 10"]]


async def test_the_header_links_the_contests_and_ratings_and_an_unknown_contest_is_a_404(client: TestClient) -> None:
    home = await get_text(client, "/")
    assert '<a href="/contests">Contests</a>' in home and '<a href="/ratings">Ratings</a>' in home
    assert "No contests yet" in await get_text(client, "/contests")
    missing = await get_text(client, "/contests/nope", status=404)
    assert "There is no contest called <code>nope</code>" in missing
    assert "/contest list" not in missing


async def test_a_player_page_shows_the_rating_and_each_rated_contests_change_and_hides_the_banned(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool, freeze=True)
    ratings = await get_text(client, "/ratings")
    bob_id = await pool.fetchval("SELECT id FROM users WHERE display_name = 'bob'")
    assert f'<a href="/users/{bob_id}">bob</a>' in ratings
    page = await get_text(client, f"/users/{bob_id}")
    (change,) = [c for c in await contests.rating_history(pool, bob_id)]
    stored = (await contests.ratings_of(pool, [bob_id]))[bob_id]
    assert "<h1>bob</h1>" in page and f"{stored.rating:.0f} ± {stored.rd:.0f} (RD)" in page
    history = page.split('<table class="history">', 1)[1].split("</table>", 1)[0]
    row = re.findall(r"<td[^>]*>(.*?)</td>", history.split("<tbody>", 1)[1])
    assert row == [
        '<a href="/contests/spring">Spring sprint</a>',
        "1",
        f"{change.rating_before:.0f}",
        f"{change.rating_after:.0f}",
        f"{change.rating_after - change.rating_before:+.0f}",
    ]
    dave_id = await pool.fetchval("SELECT id FROM users WHERE display_name = 'dave'")
    assert "Not rated yet" in await get_text(client, f"/users/{dave_id}")  # ran before the start only

    await ban_user(pool, MOD, "discord:bob", "shared an exploit")
    hidden = await client.get(f"/users/{bob_id}")
    assert hidden.status == 404 and f"There is no player #{bob_id} to show." in await hidden.text()
    assert (await client.get("/users/987654321")).status == 404


async def test_entrants_who_tie_share_a_place_on_the_board_and_the_podium(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    # Rank sums: bob 1 + 1 = 2; alice 2 + 3 and carol 3 + 2 both 5; dave 4 + 4 = 8. Places 1, 2, 2, 4.
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool)
    runs = (
        ("bob", "vector_add", 90.0), ("alice", "vector_add", 50.0), ("carol", "vector_add", 40.0),
        ("dave", "vector_add", 10.0), ("bob", "matmul", 90.0), ("carol", "matmul", 50.0),
        ("alice", "matmul", 40.0), ("dave", "matmul", 10.0),
    )  # fmt: skip
    for i, (user, slug, score) in enumerate(runs):
        await ranked_at(pool, user, score, START + timedelta(seconds=10 + i), slug=slug)
    await freeze_if_due(pool, FROZEN_AT, podium_check=False)
    clock.at = FROZEN_AT + timedelta(minutes=1)
    page = await get_text(client, "/contests/spring")
    placed = [(row[0], row[1], row[2]) for row in board_rows(page)]
    assert placed == [("1", "bob", "2"), ("2", "alice", "5"), ("2", "carol", "5"), ("4", "dave", "8")]
    podium = page.split('<ol class="podium">', 1)[1].split("</ol>", 1)[0]
    assert re.findall(r'<li value="(\d+)">(\w+)', podium) == [("1", "bob"), ("2", "alice"), ("2", "carol")]


async def test_a_hostile_contest_title_is_escaped_on_every_contest_page(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool, title=HOSTILE)
    await ranked_at(pool, HOSTILE, 10.0, START + timedelta(seconds=5))
    clock.at = START + timedelta(seconds=30)
    for path in ("/contests", "/contests/spring", "/contests/spring/upsolve"):
        page = await get_text(client, path)
        assert HOSTILE not in page and "<script>" not in page, path
        assert ESCAPED_HOSTILE in page, path


async def test_hostile_code_revealed_after_the_end_is_shown_escaped(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    seeded = await seed_contest(pool)
    run = seeded.runs[("alice", "vector_add")]
    code = f"// {HOSTILE}\n</pre><img src=x onerror=alert(1)>\n"
    await pool.execute(
        "UPDATE sources SET body = $2 WHERE sha256 = (SELECT source_sha256 FROM submissions WHERE id = $1)", run, code
    )
    clock.at = END
    page = await get_text(client, f"/submissions/{run}")
    assert HOSTILE not in page and "<img src=x" not in page and "</pre><img" not in page
    assert "&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;" in page


async def test_a_running_contests_board_is_computed_as_the_server_starts(
    pool: asyncpg.Pool, db_dsn: str, clock: Clock
) -> None:
    await seed_contest(pool)
    started = START + timedelta(seconds=30)
    clock.at = started
    async with create_pool(db_dsn, min_size=1, max_size=2, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn, board_cache_s=600.0), reader, clock=clock)
        async with TestClient(TestServer(app, host="127.0.0.1")) as kept_client:
            clock.at = started + timedelta(seconds=20)
            page = await get_text(kept_client, "/contests/spring")
    # Computed ahead, as the server started, not by this first reader 20 s later.
    assert f'This page as of <time datetime="{started:%Y-%m-%dT%H:%M:%SZ}">' in page
