"""`core.profile_diff` on the real store: two profiled runs of the recorded H100 reports compared as their viewer
may read them; each refusal (another problem, another GPU type, a run that is not a profile, someone else's run)
says what to fix; without B, the viewer's fastest other profile is chosen, else a board leader's revealed code's,
else it says there is nothing to compare with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core.contests import ContestDraft, create_contest
from core.errors import (
    InvalidOptionError,
    NothingToCompareError,
    NotProfiledError,
    ProfilesNotComparableError,
    SubmissionNotFoundError,
)
from core.profile_diff import profile_diff, viewer_id_of
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.profiled_runs import cuda, recorded, run_of
from tests.store.store_helpers import GPUS, MATMUL, MOD, VECTOR_ADD, add_problems

START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(hours=1)


async def viewer(db: asyncpg.Pool, name: str) -> int:
    found = await viewer_id_of(db, f"discord:{name}")
    assert found is not None
    return found


async def test_a_diff_of_two_own_runs_compares_the_recorded_profiles(pool: asyncpg.Pool) -> None:  # noqa: F811
    await add_problems(pool, MATMUL)
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"))
    tiled = await run_of(pool, "ada", cuda("tiled"), report=recorded("tiled", kernel_name="matmul_kernel"))
    found = await profile_diff(pool, await viewer(pool, "ada"), naive, tiled)
    assert (found.problem, found.gpu_type, found.b_chosen) == ("matmul", "h100", "given")
    assert (found.a.submission_id, found.b.submission_id) == (naive, tiled)
    assert found.a.owner == "ada" and found.a.device == "NVIDIA H100 80GB HBM3"
    assert found.a.case_name == "m=4096,n=4096,k=4096" and found.a.file_name == "solution.cu"
    assert found.totals.duration_us.change_pct == pytest.approx(-58.42, abs=0.01)
    assert [k.side for k in found.kernels] == ["both"]


async def test_each_refusal_says_what_to_fix(pool: asyncpg.Pool) -> None:  # noqa: F811
    await add_problems(pool, MATMUL, VECTOR_ADD)
    mine = await run_of(pool, "ada", cuda("a"), report=recorded("naive"))
    ada = await viewer(pool, "ada")

    other_problem = await run_of(pool, "ada", cuda("b"), report=recorded("tiled"), slug="vector_add")
    with pytest.raises(ProfilesNotComparableError, match=r"`matmul` and run #\d+ of `vector_add`"):
        await profile_diff(pool, ada, mine, other_problem)

    other_gpu = await run_of(pool, "ada", cuda("c"), report=recorded("tiled"), gpu="a100")
    with pytest.raises(ProfilesNotComparableError, match=r"on `a100`.*Profile B on `h100` too"):
        await profile_diff(pool, ada, mine, other_gpu)

    timed = await run_of(pool, "ada", cuda("d"), mode="benchmark", score=100.0)
    with pytest.raises(NotProfiledError, match=r"is a benchmark run, not a profile.*`--mode profile`") as refused:
        await profile_diff(pool, ada, timed, mine)
    assert refused.value.code == "not_profiled"
    failed = await run_of(pool, "ada", cuda("e"), report=None)  # a profile run whose result carries no profile
    with pytest.raises(NotProfiledError, match=r"has no profile: it passed, but its runner sent no profile"):
        await profile_diff(pool, ada, mine, failed)

    with pytest.raises(InvalidOptionError, match="name two different profiled runs"):
        await profile_diff(pool, ada, mine, mine)

    # Someone else's run reads as one that does not exist, as A and as B, and so does a number nobody has.
    theirs = await run_of(pool, "bob", cuda("f"), report=recorded("tiled"))
    for a, b in ((theirs, mine), (mine, theirs), (10**9, mine)):
        with pytest.raises(SubmissionNotFoundError, match=r"no profiled run #\d+ you may read"):
            await profile_diff(pool, ada, a, b)
    with pytest.raises(SubmissionNotFoundError):
        await profile_diff(pool, None, mine, None)  # a viewer who never submitted owns nothing


async def test_without_b_the_viewers_fastest_other_profile_of_the_same_target_and_case_is_chosen(
    pool: asyncpg.Pool,  # noqa: F811
) -> None:
    await add_problems(pool, MATMUL)
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"))
    tiled = await run_of(pool, "ada", cuda("tiled"), report=recorded("tiled"))
    # Faster still, but not comparable as a default: another dtype, another case, another GPU type, another
    # author, a profile that saw no kernel.
    await run_of(pool, "ada", cuda("fp16"), report=recorded("torch"), dtype="float16")
    await run_of(pool, "ada", cuda("small"), report=recorded("wmma", case_name="m=1000,n=1000,k=1000"))
    await run_of(pool, "ada", cuda("a100"), report=recorded("wmma"), gpu="a100")
    await run_of(pool, "bob", cuda("bob"), report=recorded("wmma"))
    await run_of(pool, "ada", cuda("empty"), report=recorded("naive").model_copy(update={"kernels": []}))
    slower = await run_of(pool, "ada", cuda("slower"), report=recorded("naive"))

    ada = await viewer(pool, "ada")
    found = await profile_diff(pool, ada, naive, None)
    assert (found.b.submission_id, found.b_chosen) == (tiled, "own_fastest")
    # From the fastest one, the next fastest other one.
    back = await profile_diff(pool, ada, tiled, None)
    assert back.b.submission_id in (naive, slower) and back.b_chosen == "own_fastest"
    assert back.b.submission_id == slower, "a tie goes to the latest run"


async def test_without_an_own_profile_b_is_a_leaders_profile_of_revealed_code_else_nothing(
    pool: asyncpg.Pool,  # noqa: F811
) -> None:
    await add_problems(pool, MATMUL)
    draft = ContestDraft("sprint", "Sprint", START, END, ("matmul",), (("h100", "float32"),))
    await create_contest(pool, MOD, draft, now=START - timedelta(days=1), gpus=GPUS)
    mine = await run_of(pool, "ada", cuda("mine"), report=recorded("naive"))
    ada = await viewer(pool, "ada")
    with pytest.raises(NothingToCompareError, match=r"no other profile of `matmul` on `h100` in float32") as refused:
        await profile_diff(pool, ada, mine, None, now=END + timedelta(days=1))
    assert refused.value.code == "nothing_to_compare"

    # The leader's ranked run counts for the contest; they profiled that same source (and another, unrevealed one).
    leader_code = cuda("leader")
    ranked = await run_of(pool, "lea", leader_code, mode="ranked", score=900.0)
    await pool.execute("UPDATE submissions SET created_at = $2 WHERE id = $1", ranked, START + timedelta(minutes=5))
    profiled = await run_of(pool, "lea", leader_code, report=recorded("tiled"))
    secret = await run_of(pool, "lea", cuda("leader's secret"), report=recorded("wmma"))

    # While the contest runs its code is hidden, and so is the profile of it.
    with pytest.raises(NothingToCompareError):
        await profile_diff(pool, ada, mine, None, now=START + timedelta(minutes=30))
    with pytest.raises(SubmissionNotFoundError):
        await profile_diff(pool, ada, mine, profiled, now=START + timedelta(minutes=30))

    after = END + timedelta(days=1)
    found = await profile_diff(pool, ada, mine, None, now=after)
    assert (found.b.submission_id, found.b_chosen, found.b.owner) == (profiled, "leader", "lea")
    # Named as B (or as A) it may be read too; the leader's other code stays theirs.
    assert (await profile_diff(pool, ada, profiled, mine, now=after)).a.submission_id == profiled
    with pytest.raises(SubmissionNotFoundError):
        await profile_diff(pool, ada, mine, secret, now=after)
