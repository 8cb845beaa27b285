"""Contests against a real store: the board of a contest's window, the freeze that waits for late jobs, the rating
given once, the upsolve board, hidden problems, code reveal, invitations, cancelling and amending a frozen board.

Time is injected: each submission's acceptance time is set to where the test needs it on a fixed contest clock
(`stamp`), and every core call gets its `now`. Nothing sleeps.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core import browse
from core.contests import (
    FREEZE_GRACE,
    ContestDraft,
    amend_frozen_board,
    cancel_contest,
    code_revealed,
    contest_board,
    create_contest,
    edit_contest,
    freeze_if_due,
    hidden_problem_ids,
    invite,
    rate_frozen_contest,
    set_code_reveal,
    user_rating,
    visible_problems,
)
from core.errors import (
    ContestError,
    ContestExistsError,
    ContestNotFoundError,
    SubmissionNotFoundError,
    UnknownProblemError,
)
from core.moderation import Actor, rerun_submission
from core.problems import ProblemSpec, sync_problem
from core.store import moderation, problems
from core.submit.intake import SubmitReceipt, submit
from tests.store.store_helpers import (
    GPUS,
    MATMUL,
    MOD,
    ROOMY,
    VECTOR_ADD,
    add_problems,
    finish,
    request,
    submission,
    submit_scored,
)

START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(minutes=1)
CREATED = START - timedelta(hours=1)
SECRET = ProblemSpec("secret_sum", "Secret sum", 1, ("float32",), source="def reference(a): return a\n")


async def stamp(pool: asyncpg.Pool, receipt: SubmitReceipt, at: datetime) -> None:
    """Say the submission was accepted at `at` on the contest clock."""
    await pool.execute("UPDATE submissions SET created_at = $2 WHERE id = $1", receipt.submission_id, at)


async def ranked(pool: asyncpg.Pool, user: str, score: float, at: datetime, slug: str = "vector_add") -> SubmitReceipt:
    """A ranked run judged at once with `score`, accepted at `at`."""
    receipt = await submit_scored(pool, user, score, slug=slug)
    await stamp(pool, receipt, at)
    return receipt


async def make_contest(
    pool: asyncpg.Pool, slug: str = "spring", problems: tuple[str, ...] = ("vector_add",), visibility: str = "public"
) -> None:
    draft = ContestDraft(slug, "Spring sprint", START, END, problems, (("h100", "float32"),), visibility)
    await create_contest(pool, MOD, draft, now=CREATED, gpus=GPUS)


def places(board: object) -> list[tuple[str, int, int]]:
    return [(line.display_name, line.place, line.total) for line in board.lines]  # type: ignore[attr-defined]


async def test_a_contest_counts_runs_accepted_in_its_window_waits_for_late_jobs_and_rates_once(pool: asyncpg.Pool):
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool, problems=("vector_add", "matmul"))
    # Before the start: not counted, however good.
    await ranked(pool, "alice", 1000.0, START - timedelta(seconds=10))
    await ranked(pool, "bob", 1000.0, START - timedelta(seconds=10))
    # During the contest.
    await ranked(pool, "bob", 80.0, START + timedelta(seconds=10))
    alice_run = await ranked(pool, "alice", 50.0, START + timedelta(seconds=20))
    await ranked(pool, "carol", 40.0, START + timedelta(seconds=25))
    await ranked(pool, "alice", 30.0, START + timedelta(seconds=30), slug="matmul")
    # Accepted before the deadline; the runner judges it only after the end.
    late = await submit(pool, request("bob", slug="matmul"), ROOMY)
    await stamp(pool, late, END - timedelta(seconds=1))
    # After the end: the upsolve board only.
    await ranked(pool, "carol", 500.0, END + timedelta(minutes=1))

    live = await contest_board(pool, "spring")
    # vector_add: bob 1, alice 2, carol 3; matmul: alice 1, and the two without a run 1 + 1 = 2 each.
    assert places(live) == [("alice", 1, 3), ("bob", 1, 3), ("carol", 3, 5)]
    assert [(c.slug, c.entrants) for c in live.columns] == [("vector_add", 3), ("matmul", 1)]

    waiting = await freeze_if_due(pool, END + timedelta(seconds=1), podium_check=False)
    assert waiting.frozen == [] and [w.pending_jobs for w in waiting.waiting] == [[late.job_id]]
    assert waiting.waiting[0].freeze_by == END + FREEZE_GRACE

    await finish(pool, late, 40.0)
    report = await freeze_if_due(pool, END + timedelta(seconds=90), podium_check=False)
    assert [f.contest.slug for f in report.frozen] == ["spring"] and report.frozen[0].left_out_jobs == []
    final = report.frozen[0].board
    assert final.frozen and places(final) == [("bob", 1, 2), ("alice", 2, 4), ("carol", 3, 6)]
    assert [line.display_name for line in final.podium] == ["bob", "alice", "carol"]
    assert places(await contest_board(pool, "spring")) == places(final)
    upsolve = await contest_board(pool, "spring", "upsolve")
    assert places(upsolve) == [("carol", 1, 2)], "the late judged run stays on the contest board"

    changes = {c.user_id: c for c in report.frozen[0].ratings}
    assert len(changes) == 3
    bob, _ = await user_rating(pool, "discord:bob")
    carol, history = await user_rating(pool, "discord:carol")
    assert bob is not None and carol is not None and bob.rating > 1500 > carol.rating
    assert [h.place for h in history] == [3] and bob.contests == 1

    # Freezing and rating again change nothing.
    again = await freeze_if_due(pool, END + timedelta(hours=5), podium_check=False)
    assert again.frozen == [] and again.waiting == []
    assert await rate_frozen_contest(pool, "spring", now=END + timedelta(hours=5)) == []
    assert (await user_rating(pool, "discord:bob"))[0] == bob
    assert await pool.fetchval("SELECT count(*) FROM rating_history") == 3

    # Code: hidden from others while the contest runs, revealed after its end unless the author opts out.
    during = await submission(pool, alice_run.submission_id)
    assert not await code_revealed(pool, during, START + timedelta(seconds=30))
    assert await code_revealed(pool, during, END)
    await set_code_reveal(pool, Actor("discord:alice", "alice"), False)
    assert not await code_revealed(pool, during, END + timedelta(days=1))


async def test_the_freeze_goes_ahead_without_jobs_still_unfinished_after_the_grace_period(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    stuck = await submit(pool, request("bob"), ROOMY)
    await stamp(pool, stuck, START + timedelta(seconds=50))

    assert (await freeze_if_due(pool, END + FREEZE_GRACE - timedelta(seconds=1), podium_check=False)).frozen == []
    report = await freeze_if_due(pool, END + FREEZE_GRACE, podium_check=False)
    assert report.frozen[0].left_out_jobs == [stuck.job_id]
    assert places(report.frozen[0].board) == [("alice", 1, 1)]
    assert report.frozen[0].ratings == [], "one entrant plays no game and is not rated"

    # The result comes at last: the frozen board keeps what froze, and the run is no upsolve run.
    await finish(pool, stuck, 90.0)
    assert places(await contest_board(pool, "spring")) == [("alice", 1, 1)]
    assert places(await contest_board(pool, "spring", "upsolve")) == []


async def test_a_moderator_rerun_changes_the_frozen_board_only_through_an_audited_amendment(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    alice = await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    await ranked(pool, "bob", 80.0, START + timedelta(seconds=6))
    await freeze_if_due(pool, END, podium_check=False)
    ratings_before = await pool.fetch("SELECT * FROM ratings ORDER BY user_id")

    job_id = await rerun_submission(pool, MOD, alice.submission_id, "noisy host")
    with pytest.raises(ContestError, match=f"Job #{job_id} of `spring` has not finished"):
        await amend_frozen_board(pool, MOD, "spring", "rerun", now=END + timedelta(minutes=5))
    await finish(pool, job_id, 100.0)
    assert places(await contest_board(pool, "spring")) == [("bob", 1, 1), ("alice", 2, 2)], "frozen until amended"
    assert (await freeze_if_due(pool, END + timedelta(minutes=6), podium_check=False)).frozen == []

    amendment = await amend_frozen_board(
        pool, MOD, "spring", "rerun after a noisy host", now=END + timedelta(minutes=7)
    )
    assert amendment.changed and places(amendment.after) == [("alice", 1, 1), ("bob", 2, 2)]
    assert places(await contest_board(pool, "spring")) == [("alice", 1, 1), ("bob", 2, 2)]
    [entry] = await moderation.audit_log(pool, target="contest:spring", limit=1)
    assert entry.action == "contest_amend" and entry.reason == "rerun after a noisy host"
    alice_id, bob_id = amendment.after.lines[0].user_id, amendment.after.lines[1].user_id
    assert entry.details == {"before": [[bob_id, 1, 1], [alice_id, 2, 2]], "after": [[alice_id, 1, 1], [bob_id, 2, 2]]}
    assert await pool.fetch("SELECT * FROM ratings ORDER BY user_id") == ratings_before, "ratings are given once"


async def test_an_invite_only_contest_ranks_invited_users_only(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool, visibility="invite_only")
    assert await invite(pool, MOD, "spring", [Actor("discord:alice", "alice")]) != []
    await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    await ranked(pool, "bob", 80.0, START + timedelta(seconds=6))
    await ranked(pool, "bob", 90.0, END + timedelta(seconds=6))
    assert places(await contest_board(pool, "spring")) == [("alice", 1, 1)]
    assert places(await contest_board(pool, "spring", "upsolve")) == []
    await make_contest(pool, "open")
    with pytest.raises(ContestError, match="is public"):
        await invite(pool, MOD, "open", [Actor("discord:bob", "bob")])


async def test_problems_not_yet_public_are_hidden_from_the_list_until_the_start(pool: asyncpg.Pool):
    await add_problems(pool)
    secret = await sync_problem(pool, SECRET)
    await make_contest(pool, problems=("vector_add", "secret_sum"))
    listed = await problems.list_problems(pool)
    assert await hidden_problem_ids(pool, START - timedelta(seconds=1)) == {secret.problem_id}
    before = await visible_problems(pool, listed, START - timedelta(seconds=1))
    assert [p.slug for p in before] == ["vector_add"], "a built-in problem was public already"
    assert [p.slug for p in await visible_problems(pool, listed, START)] == ["secret_sum", "vector_add"]


async def test_a_cancelled_contest_never_freezes_and_hides_nothing(pool: asyncpg.Pool):
    await add_problems(pool)
    await sync_problem(pool, SECRET)
    await make_contest(pool, problems=("secret_sum",))
    await cancel_contest(pool, MOD, "spring", "wrong problem", now=CREATED)
    assert await hidden_problem_ids(pool, CREATED) == set()
    report = await freeze_if_due(pool, END + timedelta(days=1), podium_check=False)
    assert report.frozen == [] and report.waiting == []
    with pytest.raises(ContestError, match="cancelled already"):
        await cancel_contest(pool, MOD, "spring", "again", now=CREATED)
    with pytest.raises(ContestError, match="was cancelled"):
        await edit_contest(pool, MOD, "spring", now=CREATED, title="Another", gpus=GPUS)
    [entry] = await moderation.audit_log(pool, target="contest:spring", limit=1)
    assert entry.action == "contest_cancel" and entry.reason == "wrong problem"


async def test_problems_and_targets_change_only_before_the_start_and_the_end_never_moves_into_the_past(
    pool: asyncpg.Pool,
):
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool)
    edited = await edit_contest(pool, MOD, "spring", now=CREATED, problems=["matmul", "vector_add"], gpus=GPUS)
    assert [p.slug for p in edited.problems] == ["matmul", "vector_add"]
    running = START + timedelta(seconds=30)
    with pytest.raises(
        ContestError, match="only its title, its end and its reserved share can change, not its problems"
    ):
        await edit_contest(pool, MOD, "spring", now=running, problems=["vector_add"], gpus=GPUS)
    with pytest.raises(ContestError, match="has passed"):
        await edit_contest(pool, MOD, "spring", now=running, ends_at=START + timedelta(seconds=20), gpus=GPUS)
    moved = await edit_contest(
        pool, MOD, "spring", now=running, title="Longer sprint", ends_at=END + timedelta(hours=1), gpus=GPUS
    )
    assert moved.contest.title == "Longer sprint" and moved.contest.ends_at == END + timedelta(hours=1)
    with pytest.raises(ContestError, match="ended at"):
        await edit_contest(pool, MOD, "spring", now=END + timedelta(hours=2), title="Too late", gpus=GPUS)


async def test_creating_a_contest_refuses_a_past_start_a_naive_time_a_dtype_no_problem_takes_and_a_taken_slug(
    pool: asyncpg.Pool,
):
    await add_problems(pool, VECTOR_ADD, MATMUL)
    targets = (("h100", "float32"),)
    with pytest.raises(ContestError, match="has passed"):
        await create_contest(
            pool, MOD, ContestDraft("a", "A", START, END, ("vector_add",), targets), now=END, gpus=GPUS
        )
    with pytest.raises(ContestError, match="no time zone"):
        await create_contest(
            pool,
            MOD,
            ContestDraft("a", "A", START.replace(tzinfo=None), END, ("vector_add",), targets),
            now=CREATED,
            gpus=GPUS,
        )
    with pytest.raises(ContestError, match="`matmul` does not take bfloat16"):
        await create_contest(
            pool, MOD, ContestDraft("a", "A", START, END, ("matmul",), (("h100", "bfloat16"),)), now=CREATED, gpus=GPUS
        )
    await make_contest(pool)
    with pytest.raises(ContestExistsError):
        await make_contest(pool)
    with pytest.raises(ContestNotFoundError, match="no contest called `nope`"):
        await contest_board(pool, "nope")


async def test_the_problem_list_and_autocomplete_leave_out_hidden_problems(pool: asyncpg.Pool):
    await add_problems(pool)
    await sync_problem(pool, SECRET)
    await make_contest(pool, problems=("secret_sum",))
    early = START - timedelta(minutes=1)
    assert [e.stored.slug for e in await browse.list_problems(pool, now=early)] == ["vector_add"]
    assert await browse.match_problems(pool, "secret", now=early) == []
    assert [p.slug for p in await browse.match_problems(pool, "secret", now=START)] == ["secret_sum"]
    # Its statement (`/problem`) is as hidden as its name, with no hint that would name it.
    with pytest.raises(UnknownProblemError, match=r"^There is no problem called `secret_sum`\.$"):
        await browse.get_problem_entry(pool, "secret_sum", now=early)
    assert (await browse.get_problem_entry(pool, "secret_sum", now=START)).stored.slug == "secret_sum"


async def test_others_read_contest_code_only_after_the_end_and_only_with_the_authors_leave(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    run = await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    practice = await ranked(pool, "alice", 60.0, START - timedelta(days=1))
    with pytest.raises(SubmissionNotFoundError):
        await browse.submission_detail(pool, run.submission_id, "discord:bob", now=START + timedelta(seconds=30))
    detail = await browse.submission_detail(pool, run.submission_id, "discord:bob", now=END)
    assert "def solution" in detail.source
    with pytest.raises(SubmissionNotFoundError):
        await browse.submission_detail(pool, practice.submission_id, "discord:bob", now=END)
    await set_code_reveal(pool, Actor("discord:alice", "alice"), False)
    with pytest.raises(SubmissionNotFoundError):
        await browse.submission_detail(pool, run.submission_id, "discord:bob", now=END)
    assert (await browse.submission_detail(pool, run.submission_id, "discord:alice", now=START)).source


async def test_two_schedulers_freezing_at_once_freeze_and_rate_the_contest_once(pool: asyncpg.Pool):
    await add_problems(pool)
    await make_contest(pool)
    await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    await ranked(pool, "bob", 80.0, START + timedelta(seconds=6))
    reports = await asyncio.gather(*(freeze_if_due(pool, END, podium_check=False) for _ in range(4)))
    assert sum(len(r.frozen) for r in reports) == 1
    assert await pool.fetchval("SELECT count(*) FROM rating_history") == 2
    assert {r["contests"] for r in await pool.fetch("SELECT contests FROM ratings")} == {1}


async def test_the_bots_freezer_waits_for_late_runs_only_as_long_as_its_grace(pool: asyncpg.Pool):
    from bot.freezer import ContestFreezer  # the bot's clock over this core: ARENA_BOT_CONTEST_FREEZE_GRACE_S

    await add_problems(pool)
    await make_contest(pool)
    await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    late = await submit(pool, request("bob"), ROOMY)
    await stamp(pool, late, END - timedelta(seconds=1))  # accepted in time, never judged

    async def announce(_embed: object) -> None:
        return None

    ten_minutes_on = END + timedelta(minutes=10)
    patient = ContestFreezer(pool, 1.0, announce, clock=lambda: ten_minutes_on, podium_check=False)  # the default hour
    assert [w.pending_jobs for w in (await patient.tick()).waiting] == [[late.job_id]]
    brief = ContestFreezer(
        pool, 1.0, announce, clock=lambda: ten_minutes_on, grace=timedelta(minutes=5), podium_check=False
    )
    frozen = (await brief.tick()).frozen
    assert [f.contest.slug for f in frozen] == ["spring"] and frozen[0].left_out_jobs == [late.job_id]


async def test_a_restarted_freezer_neither_repeats_the_waiting_note_nor_loses_a_podium(pool: asyncpg.Pool):
    from bot.freezer import ContestFreezer  # the bot's clock over this core

    await add_problems(pool)
    await make_contest(pool)
    await ranked(pool, "alice", 50.0, START + timedelta(seconds=5))
    await ranked(pool, "bob", 40.0, START + timedelta(seconds=6))
    late = await submit(pool, request("carol"), ROOMY)
    await stamp(pool, late, END - timedelta(seconds=1))  # accepted in time, judged after the end
    posted: list[str] = []

    async def announce(embed: object) -> None:
        posted.append(str(embed.title))  # type: ignore[attr-defined]

    def freezer(at: datetime) -> ContestFreezer:
        return ContestFreezer(pool, 1.0, announce, clock=lambda: at, podium_check=False)

    await freezer(END + timedelta(seconds=1)).tick()
    await freezer(END + timedelta(seconds=2)).tick()  # a restarted bot: a new freezer, nothing in memory
    assert posted == ["⏳ Spring sprint has ended"]

    # The board freezes, and the process stops before it announces the podium.
    await finish(pool, late, 30.0)
    assert [
        f.contest.slug for f in (await freeze_if_due(pool, END + timedelta(seconds=30), podium_check=False)).frozen
    ] == ["spring"]
    await freezer(END + timedelta(seconds=40)).tick()
    await freezer(END + timedelta(seconds=50)).tick()
    assert posted == ["⏳ Spring sprint has ended", "🏆 Spring sprint is over"]
