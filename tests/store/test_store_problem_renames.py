"""A built-in problem that takes a new slug keeps its history: the old slug still finds it, old versions keep
their boards, and an interface change adds a version instead of overwriting one."""

from __future__ import annotations

import asyncpg

from core.problems import ProblemSpec, require_problem, sync_problem
from core.store import problems
from core.submit.intake import submit
from problems.registry import get_problem
from tests.store.store_helpers import ROOMY, finish, request

OLD_MATMUL = ProblemSpec("matmul", "Matrix multiplication", 1, ("float32",))
OLD_VECTOR_ADD = ProblemSpec("vector_add", "Vector addition", 1, ("float32",))


async def test_a_former_slug_is_renamed_and_an_interface_change_adds_a_version(pool: asyncpg.Pool) -> None:
    old = await sync_problem(pool, OLD_MATMUL)
    receipt = await submit(pool, request("alice", slug="matmul"), ROOMY)
    await finish(pool, receipt, 50.0)

    new = await sync_problem(pool, ProblemSpec.builtin(get_problem("matmul")))

    assert (new.slug, new.problem_id, new.current_version) == ("matrix-multiplication", old.problem_id, 2)
    async with pool.acquire() as conn:
        assert (await require_problem(conn, "matmul")).slug == "matrix-multiplication"
        first = await require_problem(conn, "matmul", 1)
        assert (first.version, first.problem_id) == (1, old.problem_id)
        assert await problems.get_problem(conn, "matmul") is None
    assert await pool.fetchval("SELECT count(*) FROM problems") == 1
    version_of_old_entry = await pool.fetchval(
        "SELECT problem_version FROM leaderboard_entries WHERE problem_id = $1", old.problem_id
    )
    assert version_of_old_entry == 1


async def test_a_rename_with_the_same_interface_keeps_the_version(pool: asyncpg.Pool) -> None:
    old = await sync_problem(pool, OLD_VECTOR_ADD)
    new = await sync_problem(pool, ProblemSpec.builtin(get_problem("vector_add")))
    assert (new.slug, new.problem_id, new.current_version) == ("vector-addition", old.problem_id, 1)
    again = await sync_problem(pool, ProblemSpec.builtin(get_problem("vector-addition")))
    assert (again.problem_id, again.current_version) == (old.problem_id, 1)


async def test_a_new_slug_with_no_stored_former_slug_is_created(pool: asyncpg.Pool) -> None:
    created = await sync_problem(pool, ProblemSpec.builtin(get_problem("matrix-multiplication")))
    assert (created.slug, created.current_version) == ("matrix-multiplication", 2)
    async with pool.acquire() as conn:
        assert (await require_problem(conn, "matmul")).problem_id == created.problem_id
