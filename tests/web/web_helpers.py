"""The data the web tests read: real problems and submissions, made through the core's submit and result path."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from core.contests import ContestDraft, create_contest, freeze_if_due
from core.problems import ProblemSpec
from core.submit.intake import SubmitReceipt
from tests.store.store_helpers import GPUS, MATMUL, MOD, VECTOR_ADD, add_problems, submit_scored

HOSTILE = '<script>alert("x")</script>&'


@dataclass(frozen=True)
class Seeded:
    """What `seeded` put in the store: submission ids by user, in the order made."""

    ranked: dict[str, int]
    benchmark: int
    failed: int


async def seed(pool: asyncpg.Pool) -> Seeded:
    """Two problems; on vector_add's h100/float32 board four users (one with a hostile name) in three languages,
    a benchmark run (private) and a failed ranked run."""
    await add_problems(pool, VECTOR_ADD, MATMUL)
    ranked = {}
    for user, score, language in (
        ("alice", 30.0, "python"),
        ("bob", 50.0, "cuda"),
        ("carol", 40.0, "triton"),
        (HOSTILE, 20.0, "cuda"),
    ):
        ranked[user] = (await submit_scored(pool, user, score, language=language)).submission_id
    benchmark = (await submit_scored(pool, "alice", 99.0, mode="benchmark")).submission_id
    failed = (await submit_scored(pool, "dave", None, status="failed")).submission_id
    return Seeded(ranked, benchmark, failed)


@dataclass
class Clock:
    """The moment the web app reads its pages at: `at` when a test sets it, else the wall clock."""

    at: datetime | None = None

    def __call__(self) -> datetime:
        return self.at or datetime.now(UTC)


# A contest on a fixed clock, as tests/store/test_contests.py sets one up: created an hour before its start,
# one minute long, each run's acceptance time stamped where the test needs it.
START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(minutes=1)
CREATED = START - timedelta(hours=1)
FROZEN_AT = END + timedelta(seconds=1)
SECRET = ProblemSpec("secret_sum", "Secret sum", 1, ("float32",), source="def reference(a): return a\n")


async def stamp(pool: asyncpg.Pool, receipt: SubmitReceipt, at: datetime) -> None:
    """Say the submission was accepted at `at` on the contest clock."""
    await pool.execute("UPDATE submissions SET created_at = $2 WHERE id = $1", receipt.submission_id, at)


async def ranked_at(pool: asyncpg.Pool, user: str, score: float, at: datetime, **kw: object) -> int:
    """A ranked run judged at once with `score`, accepted at `at`; its submission id."""
    receipt = await submit_scored(pool, user, score, **kw)
    await stamp(pool, receipt, at)
    return receipt.submission_id


async def make_contest(
    pool: asyncpg.Pool,
    slug: str = "spring",
    problems: tuple[str, ...] = ("vector_add", "matmul"),
    *,
    title: str = "Spring sprint",
    visibility: str = "public",
    starts_at: datetime = START,
    ends_at: datetime = END,
) -> None:
    draft = ContestDraft(slug, title, starts_at, ends_at, problems, (("h100", "float32"),), visibility)
    await create_contest(pool, MOD, draft, now=CREATED, gpus=GPUS)


@dataclass(frozen=True)
class ContestSeeded:
    """Submission ids of the contest `spring`: its contest-phase runs by (user, problem), and the upsolve run."""

    runs: dict[tuple[str, str], int]
    upsolve: int
    before_start: int


async def seed_contest(pool: asyncpg.Pool, *, freeze: bool = False) -> ContestSeeded:
    """`spring` on vector_add and matmul, target h100/float32. Contest board: bob 1 + 1 = 2, alice 2 + 2 = 4,
    carol 3 + 3 = 6 (no matmul run: its 2 entrants + 1), the hostile name 4 + 3 = 7. Upsolve board: carol alone.
    `freeze` freezes (and rates) it at FROZEN_AT."""
    await add_problems(pool, VECTOR_ADD, MATMUL)
    await make_contest(pool)
    runs = {}
    for i, (user, slug, score, language) in enumerate(
        (
            ("bob", "vector_add", 80.0, "python"),
            ("alice", "vector_add", 50.0, "cuda"),
            ("carol", "vector_add", 40.0, "python"),
            (HOSTILE, "vector_add", 20.0, "python"),
            ("bob", "matmul", 40.0, "python"),
            ("alice", "matmul", 30.0, "python"),
        )
    ):
        at = START + timedelta(seconds=10 + i)
        runs[(user, slug)] = await ranked_at(pool, user, score, at, slug=slug, language=language)
    before_start = await ranked_at(pool, "dave", 1000.0, START - timedelta(seconds=10))
    upsolve = await ranked_at(pool, "carol", 500.0, END + timedelta(seconds=30))
    if freeze:
        report = await freeze_if_due(pool, FROZEN_AT, podium_check=False)
        assert [f.contest.slug for f in report.frozen] == ["spring"]
    return ContestSeeded(runs, upsolve, before_start)
