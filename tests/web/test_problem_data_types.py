"""An integer problem's pages name the data it computes on: poly-multiply-ff is stored under the float32 key, and
its list row, its summary, its board's caption and the dtype filter's text read uint32 (the filter still sends the
key)."""

from __future__ import annotations

import asyncpg
from aiohttp.test_utils import TestClient

from core.problems import ProblemSpec, sync_problem
from problems.registry import get_problem
from tests.store.store_helpers import submit_scored
from tests.web.test_pages import board_users, get_text


async def test_the_problem_page_and_board_of_a_finite_field_problem_show_uint32(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    await sync_problem(pool, ProblemSpec.builtin(get_problem("poly-multiply-ff")))
    await submit_scored(pool, "alice", 12.5, slug="poly-multiply-ff", gpu="h100")

    page = await get_text(client, "/problems/poly-multiply-ff?gpu=h100&dtype=float32")

    assert "dtypes uint32" in page and "dtypes float32" not in page
    assert "h100 · uint32 · " in page and "h100 · float32" not in page
    assert '<option value="float32" selected>uint32</option>' in page
    assert board_users(page) == ["alice"]

    listing = await get_text(client, "/")
    row = listing.split('<a href="/problems/poly-multiply-ff">poly-multiply-ff</a>', 1)[1].split("</tr>", 1)[0]
    assert "<td>uint32</td>" in row, row


async def test_a_float_problem_shows_its_keys(client: TestClient, pool: asyncpg.Pool) -> None:
    await sync_problem(pool, ProblemSpec.builtin(get_problem("gelu")))
    page = await get_text(client, "/problems/gelu")
    assert "dtypes float32, float16, bfloat16" in page
