"""Ranking rules: best per user, ties, invalidations, bans, boards per GPU, dtype and version, languages."""

from __future__ import annotations

import random

import asyncpg
import pytest

from core.errors import InvalidOptionError, UnknownProblemError
from core.leaderboard import get_history, get_leaderboard, get_rank, list_boards
from core.moderation import (
    ban_user,
    invalidate_submission,
    replace_problem,
    rerun_submission,
    restore_submission,
    unban_user,
)
from core.store import leaderboard, submissions
from core.submit.intake import submit
from tests.store.store_helpers import MOD, ROOMY, add_problems, finish, request, submit_scored


async def board(pool: asyncpg.Pool, **kw: object) -> list[tuple[int, str, float]]:
    """(rank, user, score) rows of vector_add on h100 float32 unless told otherwise."""
    args = {"slug": "vector_add", "gpu_type": "h100", "dtype": "float32", **kw}
    page = await get_leaderboard(pool, **args)  # type: ignore[arg-type]
    return [(r.rank, r.display_name, r.score) for r in page.rows]


async def test_each_user_appears_once_with_their_best_score(pool: asyncpg.Pool):
    await add_problems(pool)
    for user, score in [("alice", 10.0), ("alice", 30.0), ("alice", 20.0), ("bob", 25.0), ("carol", 5.0)]:
        await submit_scored(pool, user, score)
    assert await board(pool) == [(1, "alice", 30.0), (2, "bob", 25.0), (3, "carol", 5.0)]


async def test_a_tie_goes_to_the_earlier_submission(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "early", 50.0)
    await submit_scored(pool, "late", 50.0)
    await submit_scored(pool, "best", 60.0)
    assert await board(pool) == [(1, "best", 60.0), (2, "early", 50.0), (3, "late", 50.0)]


async def test_a_users_tied_resubmission_keeps_their_earlier_entry(pool: asyncpg.Pool):
    await add_problems(pool)
    first = await submit_scored(pool, "alice", 40.0)
    await submit_scored(pool, "alice", 40.0)
    page = await get_leaderboard(pool, "vector_add", "h100")
    assert [r.submission_id for r in page.rows] == [first.submission_id]


async def test_failed_errored_and_unranked_runs_stay_off_the_board(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "failed", 500.0, status="failed")
    await submit_scored(pool, "benchmarked", 400.0, mode="benchmark")
    await submit_scored(pool, "tested", None, mode="test")
    await submit(pool, request("pending"), ROOMY)
    await submit_scored(pool, "ranked", 1.0)
    # The same user's faster benchmark run does not count; only their ranked run does.
    await submit_scored(pool, "ranked", 300.0, mode="benchmark")
    await submit_scored(pool, "ranked", 2.0)
    assert await board(pool) == [(1, "ranked", 2.0)]


async def test_an_invalidated_best_gives_way_to_the_next_best_and_comes_back_on_restore(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "alice", 20.0)
    cheat = await submit_scored(pool, "alice", 90.0)
    await submit_scored(pool, "bob", 50.0)
    assert await board(pool) == [(1, "alice", 90.0), (2, "bob", 50.0)]

    invalidated = await invalidate_submission(pool, MOD, cheat.submission_id, "returns a cached buffer")
    assert invalidated.invalidated and invalidated.score == 90.0, "kept for audit, score and all"
    assert await board(pool) == [(1, "bob", 50.0), (2, "alice", 20.0)]

    await restore_submission(pool, MOD, cheat.submission_id, "false alarm")
    assert await board(pool) == [(1, "alice", 90.0), (2, "bob", 50.0)]


async def test_a_banned_user_leaves_every_board_and_returns_when_unbanned(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "mallory", 99.0)
    await submit_scored(pool, "mallory", 80.0, dtype="float16")
    await submit_scored(pool, "alice", 50.0)
    await submit_scored(pool, "bob", 40.0)
    await ban_user(pool, MOD, "discord:mallory", "timer patching")
    assert await board(pool) == [(1, "alice", 50.0), (2, "bob", 40.0)]
    assert await board(pool, dtype="float16") == []
    assert await get_rank(pool, "vector_add", "h100", "float32", "discord:mallory") is None
    await unban_user(pool, MOD, "discord:mallory")
    assert await board(pool) == [(1, "mallory", 99.0), (2, "alice", 50.0), (3, "bob", 40.0)]


async def test_each_gpu_type_and_dtype_has_its_own_board(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "alice", 10.0, gpu="h100", dtype="float32")
    await submit_scored(pool, "bob", 20.0, gpu="a100", dtype="float32")
    await submit_scored(pool, "carol", 30.0, gpu="h100", dtype="float16")
    assert await board(pool) == [(1, "alice", 10.0)]
    assert await board(pool, gpu_type="a100") == [(1, "bob", 20.0)]
    assert await board(pool, dtype="float16") == [(1, "carol", 30.0)]
    _, boards = await list_boards(pool, "vector_add")
    assert {(b.gpu_type, b.dtype, b.entries) for b in boards} == {
        ("h100", "float32", 1),
        ("a100", "float32", 1),
        ("h100", "float16", 1),
    }


async def test_a_new_problem_version_starts_an_empty_board_and_the_old_one_stays(pool: asyncpg.Pool):
    await add_problems(pool)
    old = await submit_scored(pool, "alice", 10.0)
    replaced = await replace_problem(pool, MOD, "vector_add", source=None, dtypes=["float32"], reason="bigger cases")
    assert (replaced.version, replaced.current_version) == (2, 2)
    assert await board(pool) == []
    assert await board(pool, version=1) == [(1, "alice", 10.0)]
    new = await submit_scored(pool, "bob", 5.0)
    assert await board(pool) == [(1, "bob", 5.0)]
    assert (await submissions.get_submission(pool, old.submission_id)).problem_version == 1  # type: ignore[union-attr]
    assert (await submissions.get_submission(pool, new.submission_id)).problem_version == 2  # type: ignore[union-attr]


async def test_the_language_filter_ranks_each_users_best_in_that_language(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit_scored(pool, "alice", 100.0, language="cuda")
    await submit_scored(pool, "alice", 30.0, language="python")
    await submit_scored(pool, "bob", 50.0, language="python")
    await submit_scored(pool, "carol", 70.0, language="triton")
    overall = await get_leaderboard(pool, "vector_add", "h100")
    assert [(r.display_name, r.language, r.score) for r in overall.rows] == [
        ("alice", "cuda", 100.0),
        ("carol", "triton", 70.0),
        ("bob", "python", 50.0),
    ]
    assert await board(pool, language="python") == [(1, "bob", 50.0), (2, "alice", 30.0)]
    assert await board(pool, language="cuda") == [(1, "alice", 100.0)]
    rank = await get_rank(pool, "vector_add", "h100", "float32", "discord:alice", language="python")
    assert rank is not None and rank.rank == 2


async def test_a_users_rank_is_their_position_on_the_full_board(pool: asyncpg.Pool):
    await add_problems(pool)
    rng = random.Random(7)
    best: dict[str, float] = {}
    for _ in range(60):
        user = f"u{rng.randrange(25)}"
        score = float(rng.choice([1, 2, 3, 5, 8, 13]))  # few values, so there are ties to break
        await submit_scored(pool, user, score)
        best[user] = max(best.get(user, 0.0), score)
    page = await get_leaderboard(pool, "vector_add", "h100", limit=100)
    assert [r.rank for r in page.rows] == list(range(1, len(best) + 1))
    assert {r.display_name: r.score for r in page.rows} == best
    assert [r.score for r in page.rows] == sorted(best.values(), reverse=True)
    for row in page.rows:
        rank = await get_rank(pool, "vector_add", "h100", "float32", f"discord:{row.display_name}")
        assert rank == row
    second_page = await get_leaderboard(pool, "vector_add", "h100", limit=5, offset=5)
    assert second_page.rows == page.rows[5:10]


async def test_history_lists_a_users_submissions_newest_first(pool: asyncpg.Pool):
    await add_problems(pool)
    ids = [(await submit_scored(pool, "alice", float(i + 1))).submission_id for i in range(3)]
    await submit_scored(pool, "bob", 9.0)
    history = await get_history(pool, "discord:alice")
    assert [s.id for s in history] == ids[::-1]
    assert [s.status for s in history] == ["passed"] * 3


async def test_a_rerun_replaces_the_verdict_and_keeps_the_old_jobs_results(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit_scored(pool, "alice", 80.0)
    await submit_scored(pool, "bob", 50.0)
    job_id = await rerun_submission(pool, MOD, receipt.submission_id, "suspiciously fast")
    assert await board(pool) == [(1, "bob", 50.0)], "off the board until the rerun finishes"
    await finish(pool, job_id, 40.0)
    assert await board(pool) == [(1, "bob", 50.0), (2, "alice", 40.0)]
    old_results = await submissions.case_results(pool, receipt.job_id)
    assert [c.gflops for c in old_results if c.kind == "benchmark"] == [80.0]


async def test_rebuilding_every_board_gives_the_boards_kept_up_to_date(pool: asyncpg.Pool):
    await add_problems(pool)
    rng = random.Random(3)
    receipts = []
    for i in range(40):
        language = rng.choice(["python", "cuda", "triton"])
        receipts.append(
            await submit_scored(
                pool,
                f"u{i % 9}",
                float(rng.randrange(1, 50)),
                language=language,
                dtype=rng.choice(["float32", "float16"]),
            )
        )
    await invalidate_submission(pool, MOD, receipts[3].submission_id, "cheat")
    query = "SELECT * FROM leaderboard_entries ORDER BY problem_id, gpu_type, dtype, language, user_id"
    kept = [dict(r) for r in await pool.fetch(query)]
    async with pool.acquire() as conn, conn.transaction():
        written = await leaderboard.rebuild(conn)
    assert written == len(kept)
    assert [dict(r) for r in await pool.fetch(query)] == kept


async def test_bad_board_options_say_what_to_use(pool: asyncpg.Pool):
    await add_problems(pool)
    with pytest.raises(InvalidOptionError, match="cuda, python, triton"):
        await get_leaderboard(pool, "vector_add", "h100", language="rust")
    with pytest.raises(UnknownProblemError, match="no version 7"):
        await get_leaderboard(pool, "vector_add", "h100", version=7)
