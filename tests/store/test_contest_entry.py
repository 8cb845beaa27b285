"""What a ranked run counts for, against a real store: each reason a contest refuses a run, a run that counts, two
contests on one problem, the run made 47 s before the start, and the boards agreeing with every answer.

Time is injected as in test_contests.py: each submission's acceptance time is stamped on a fixed contest clock,
and every core call gets its `now`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from core.contests import ContestDraft, contest_board, create_contest, freeze_if_due, invite
from core.contests.entry import ContestEntries, contest_entries, describe_span, submission_entries
from core.moderation import Actor, ban_user
from core.problems import ProblemSpec, sync_problem
from core.store import submissions
from core.submit.intake import SubmitReceipt, submit
from tests.store.store_helpers import GPUS, MOD, ROOMY, VECTOR_ADD, add_problems, finish, request, submit_scored

START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(hours=1)
CREATED = START - timedelta(days=1)


async def make_contest(
    pool: asyncpg.Pool,
    slug: str = "sprint",
    *,
    targets: tuple[tuple[str, str], ...] = (("h100", "float32"),),
    visibility: str = "public",
    start: datetime = START,
    end: datetime = END,
) -> None:
    draft = ContestDraft(slug, f"The {slug}", start, end, ("vector_add",), targets, visibility)
    await create_contest(pool, MOD, draft, now=CREATED, gpus=GPUS)


async def run_at(
    pool: asyncpg.Pool, user: str, at: datetime, *, score: float | None = 10.0, status: str = "passed", **kw: object
) -> SubmitReceipt:
    """A ranked run accepted at `at` and judged at once (`score` None: left queued)."""
    if score is None:
        receipt = await submit(pool, request(user, **kw), ROOMY)  # type: ignore[arg-type]
    else:
        receipt = await submit_scored(pool, user, score, status, **kw)
    await pool.execute("UPDATE submissions SET created_at = $2 WHERE id = $1", receipt.submission_id, at)
    return receipt


async def entries_of(pool: asyncpg.Pool, receipt: SubmitReceipt, now: datetime) -> ContestEntries | None:
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None
    return await contest_entries(pool, sub, now)


def statuses(found: ContestEntries | None) -> dict[str, str]:
    assert found is not None, "the run's problem is in a contest, so there is something to say"
    return {e.contest: e.status for e in found.entries}


async def test_a_run_with_no_contest_on_its_problem_or_not_ranked_says_nothing(pool: asyncpg.Pool):
    await add_problems(pool)
    alone = await run_at(pool, "alice", START)
    assert await entries_of(pool, alone, START) is None
    await make_contest(pool)
    practice = await run_at(pool, "alice", START, mode="benchmark")
    assert await entries_of(pool, practice, START) is None
    assert await submission_entries(pool, 10**9, START) is None  # no such submission


async def test_a_run_made_47_s_before_the_start_says_when_the_contest_starts(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    early = await run_at(pool, "alice", START - timedelta(seconds=47), score=None)
    # The receipt, at the moment it was accepted:
    at_receipt = await entries_of(pool, early, START - timedelta(seconds=47))
    assert at_receipt is not None and at_receipt.counts_for_none
    assert at_receipt.line == "this run counts for no contest: `sprint` starts in 47 s (2030-03-01 12:00:00 UTC)"
    assert statuses(at_receipt) == {"sprint": "not_started"}
    # The result, read after the start: the same reason, told in the past.
    await finish(pool, early, 99.0)
    later = await entries_of(pool, early, START + timedelta(seconds=3))
    assert later is not None
    assert later.line == (
        "this run counts for no contest: this run was made 47 s before `sprint` started (2030-03-01 12:00:00 UTC)"
    )
    assert (await contest_board(pool, "sprint")).lines == ()


async def test_a_run_in_the_window_counts_and_the_board_ranks_it(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    pending = await run_at(pool, "alice", START + timedelta(minutes=1), score=None)
    found = await entries_of(pool, pending, START + timedelta(minutes=1))
    assert found is not None and found.counts_for == ["sprint"]
    assert found.line == "counts for contest `sprint`"
    await finish(pool, pending, 50.0)
    board = await contest_board(pool, "sprint")
    assert [line.display_name for line in board.lines] == ["alice"]
    assert (await submission_entries(pool, pending.submission_id, END)).counts_for == ["sprint"]  # type: ignore[union-attr]


async def test_each_reason_a_contest_refuses_a_run(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool, "open", targets=(("h100", "float32"), ("h100", "float16")))
    during = START + timedelta(minutes=5)
    wrong_gpu = await run_at(pool, "alice", during, gpu="a100")
    wrong_dtype = await run_at(pool, "bob", during, dtype="bfloat16")
    after = await run_at(pool, "carol", END + timedelta(minutes=5))
    failed = await run_at(pool, "dave", during, status="failed", score=1.0)
    assert statuses(await entries_of(pool, wrong_gpu, during)) == {"open": "not_target"}
    refused = await entries_of(pool, wrong_dtype, during)
    assert refused is not None
    assert refused.line == (
        "this run counts for no contest: `open` counts runs on h100/float16, h100/float32 only, and this run is "
        "h100/bfloat16"
    )
    upsolve = await entries_of(pool, after, END + timedelta(minutes=5))
    assert upsolve is not None and upsolve.entries[0].board == "upsolve"
    assert upsolve.line == (
        "this run counts for no contest: `open` ended at 2030-03-01 13:00:00 UTC, so this run goes to its upsolve board"
    )
    assert statuses(await entries_of(pool, failed, during)) == {"open": "did_not_pass"}

    await make_contest(pool, "closed", visibility="invite_only")
    outsider = await run_at(pool, "erin", during)
    assert statuses(await entries_of(pool, outsider, during)) == {"open": "counts", "closed": "not_invited"}
    await invite(pool, MOD, "closed", [Actor("discord:erin", "erin")])
    assert statuses(await entries_of(pool, outsider, during)) == {"open": "counts", "closed": "counts"}

    await ban_user(pool, MOD, "discord:erin", "a test")
    assert statuses(await entries_of(pool, outsider, during)) == {"open": "banned", "closed": "banned"}

    # A new version of the problem: the contests hold version 1, the run is on version 2.
    await sync_problem(pool, ProblemSpec("vector_add", "Vector addition", 2, VECTOR_ADD.dtypes))
    newer = await run_at(pool, "frank", during)
    found = await entries_of(pool, newer, during)
    assert statuses(found) == {"open": "not_in_contest", "closed": "not_in_contest"}
    assert found is not None and "holds `vector_add` at v1, and this run was on v2" in found.line


async def test_two_contests_on_one_problem_one_counting_one_not_yet_started(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool, "sprint")
    await make_contest(pool, "marathon", start=END, end=END + timedelta(days=2))
    during = START + timedelta(minutes=10)
    run = await run_at(pool, "alice", during)
    found = await entries_of(pool, run, during)
    assert found is not None and found.counts_for == ["sprint"]
    assert found.line == "counts for contest `sprint`; `marathon` starts in 50 min (2030-03-01 13:00:00 UTC)"
    # A run made after the sprint's end counts for the marathon and goes to the sprint's upsolve board.
    late = await run_at(pool, "bob", END + timedelta(minutes=1))
    found = await entries_of(pool, late, END + timedelta(minutes=1))
    assert found is not None and found.counts_for == ["marathon"]
    assert found.line.startswith("counts for contest `marathon`; `sprint` ended at 2030-03-01 13:00:00 UTC")


async def test_a_run_judged_after_the_freeze_is_not_on_the_frozen_board(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    late = await run_at(pool, "alice", END - timedelta(seconds=1), score=None)
    # Freeze after the grace: the board froze without it.
    await freeze_if_due(pool, END + timedelta(days=1), podium_check=False)
    await finish(pool, late, 10.0)
    judged = END + timedelta(days=1, minutes=1)
    await pool.execute("UPDATE submissions SET finished_at = $2 WHERE id = $1", late.submission_id, judged)
    assert statuses(await entries_of(pool, late, judged)) == {"sprint": "frozen_out"}
    assert (await contest_board(pool, "sprint")).lines == ()


@dataclass(frozen=True)
class Case:
    user: str
    at: datetime
    gpu: str = "h100"
    dtype: str = "float32"
    invited: bool = True


async def test_the_boards_take_exactly_the_runs_the_answer_says_they_count_for(pool: asyncpg.Pool):
    """A table of runs, one user each: every run the answer says counts is on the contest board, every run it sends
    to the upsolve board is there, and no other run is on either."""
    await add_problems(pool)
    await make_contest(pool, "cup", targets=(("h100", "float32"), ("h200", "float16")), visibility="invite_only")
    s, e = START, END
    cases = [
        Case("u01", s - timedelta(seconds=47)),
        Case("u02", s - timedelta(microseconds=1)),
        Case("u03", s),
        Case("u04", s + timedelta(minutes=30)),
        Case("u05", e - timedelta(microseconds=1)),
        Case("u06", e),
        Case("u07", e + timedelta(days=3)),
        Case("u08", s + timedelta(minutes=1), gpu="h200", dtype="float16"),
        Case("u09", s + timedelta(minutes=1), gpu="h200"),
        Case("u10", s + timedelta(minutes=1), dtype="float16"),
        Case("u11", s + timedelta(minutes=1), invited=False),
        Case("u12", e + timedelta(minutes=1), invited=False),
        Case("u13", e + timedelta(minutes=1), gpu="l4"),
    ]
    await invite(pool, MOD, "cup", [Actor(f"discord:{c.user}", c.user) for c in cases if c.invited])
    answers: dict[str, ContestEntries] = {}
    for case in cases:
        receipt = await run_at(pool, case.user, case.at, gpu=case.gpu, dtype=case.dtype)
        found = await entries_of(pool, receipt, e + timedelta(days=4))
        assert found is not None
        answers[case.user] = found
    on_contest = {line.display_name for line in (await contest_board(pool, "cup")).lines}
    on_upsolve = {line.display_name for line in (await contest_board(pool, "cup", "upsolve")).lines}
    assert on_contest == {u for u, a in answers.items() if a.entries[0].board == "contest"}
    assert on_upsolve == {u for u, a in answers.items() if a.entries[0].board == "upsolve"}
    # The table holds both kinds, so the comparison above is not between two empty sets.
    assert on_contest == {"u03", "u04", "u05", "u08"}
    assert on_upsolve == {"u06", "u07"}
    assert {u: a.entries[0].status for u, a in answers.items() if u not in on_contest | on_upsolve} == {
        "u01": "not_started",
        "u02": "not_started",
        "u09": "not_target",
        "u10": "not_target",
        "u11": "not_invited",
        "u12": "not_invited",
        "u13": "not_target",
    }


def test_spans_read_in_the_unit_that_fits():
    assert [describe_span(x) for x in (0, 47, 119.6, 600, 7199, 7200, 7260, 86400 * 3 + 3600)] == [
        "0 s",
        "47 s",
        "2 min",
        "10 min",
        "119 min",
        "2 h",
        "2 h 1 min",
        "3 d 1 h",
    ]
