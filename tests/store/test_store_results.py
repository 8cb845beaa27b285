"""A result read back from the store is the result the runner reported: every field, unchanged; and the timing
method is the submission's, so that boards of different methods never mix."""

from __future__ import annotations

import base64
from pathlib import Path

import asyncpg
import pytest

from contract import wire
from contract.wire import CaseTiming, ErrorInfo, ProfileArtifact, ProfileReport, SubmissionResult
from core.browse import submission_detail, user_stats
from core.leaderboard import get_leaderboard, get_rank, list_boards
from core.moderation import rerun_submission
from core.results import load_result, record_result
from core.settings import RateLimitSettings
from core.store import jobs, ratelimits, submissions
from core.store.migrate import discover, migrate
from core.submit.intake import submit
from runner.profiling.ncu_report import launch_count, parse_raw_page
from tests.store.store_helpers import MOD, ROOMY, add_problems, request, submission

THIRD = 1 / 3  # a float with no short decimal form: stored as text or rounded, it would not come back equal
NCU = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"


def _timing(index: int, method: str, scale: float) -> CaseTiming:
    return CaseTiming(
        index=index,
        name=f"n={1 << (20 + index)}",
        dims=[1 << (20 + index), 3],
        method=method,  # type: ignore[arg-type]
        runtime_median_us=12.5 * scale + THIRD,
        runtime_mean_us=13.25 * scale + THIRD,
        gflops=1234.5678 * scale,
        gflops_mean=1200.0001 * scale,
        gbps=2345.6789 * scale,
        flops=3 * (1 << 40) + index,
        bytes=5 * (1 << 33) + index,
        samples=417 + index,
        cv=0.0123 + THIRD / 1000,
        converged=index % 2 == 1,
        rse=0.0049 * scale,
        dropped_samples=7 + index,
        sm_clock_mhz=1980.5,
        temperature_c=61.25 + index,
        measured_seconds=0.75 * scale,
        wall_clock_us=14.0625 * scale,
        host_waits=True,
        host_bound=True,
        judge_clock=index == 1,
        host_part_us=48.5 * scale,
    )


def _full_result(submission_id: int, method: str = "seed") -> SubmissionResult:
    """A result with a value other than the default in every field, as a runner could report it."""
    details = {"mismatches": 3, "total": 1 << 20, "max_abs_error": THIRD, "first_mismatch_index": 17, "nested": [1.5]}
    return SubmissionResult(
        submission_id=str(submission_id),
        problem_slug="vector_add",
        problem_version=1,
        dtype="float16",
        language="cuda",
        mode="ranked",
        status="failed",
        device="NVIDIA H100 80GB HBM3",
        tests=[
            wire.TestOutcome(index=0, name="n=1", dims=[1], passed=True, message="ok", details={"max_abs_error": 0.0}),
            wire.TestOutcome(
                index=1, name="n=1048576", dims=[1048576, 2], passed=False, message="differs", details=details
            ),
        ],
        timings=[_timing(0, method, 1.0), _timing(1, method, 2.5 + THIRD)],
        score_metric="gbps",
        geomean_gflops=1500.125 + THIRD,
        mean_gflops=1600.5 + THIRD,
        geomean_gbps=2500.25 + THIRD,
        mean_gbps=2600.75 + THIRD,
        error=ErrorInfo(code="wrong_answer", message="Wrong answer on case n=1048576", log="line 1\nline 2"),
        phase_seconds={"compile": 1.5 + THIRD, "test": 0.25, "benchmark": 4.0 + THIRD},
        notes=["reads a clock", "calls cudaDeviceSynchronize"],
        protocol="tp-0123456789ab",
    )


async def _record(pool: asyncpg.Pool, job_id: int, result: SubmissionResult) -> None:
    lease = await jobs.claim_job(pool, job_id, "test-owner", 30.0, "test-runner")
    assert lease is not None
    assert await record_result(pool, lease, result, "test-runner")


async def test_a_fully_populated_result_reads_back_equal_to_what_the_runner_reported(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", language="cuda", dtype="float16"), ROOMY)
    reported = _full_result(receipt.submission_id)
    await _record(pool, receipt.job_id, reported)

    sub = await submission(pool, receipt.submission_id)
    assert await load_result(pool, sub) == reported
    # What `/submission N` shows is that same result, not a summary of it.
    detail = await submission_detail(pool, receipt.submission_id, "discord:alice")
    assert detail.result == reported


async def test_a_result_without_optional_figures_reads_back_with_them_absent(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    bare = CaseTiming(
        index=0, name="n=1", dims=[1], method="arena", runtime_median_us=1.0, runtime_mean_us=1.0, gflops=1.0,
        gflops_mean=1.0, gbps=12.0, flops=1, bytes=12, samples=5, cv=0.0, converged=False,
    )  # fmt: skip
    reported = SubmissionResult(
        submission_id=str(receipt.submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="python", mode="ranked", status="passed", device="cpu", timings=[bare],
    )  # fmt: skip
    await _record(pool, receipt.job_id, reported)
    assert await load_result(pool, await submission(pool, receipt.submission_id)) == reported


async def test_the_submission_records_the_method_its_timings_were_measured_by(pool: asyncpg.Pool):
    await add_problems(pool)
    timed = await submit(pool, request("alice"), ROOMY)
    reported = _full_result(timed.submission_id, "seed").model_copy(update={"language": "python", "dtype": "float32"})
    await _record(pool, timed.job_id, reported)
    untimed = await submit(pool, request("bob", mode="test"), ROOMY)
    result = SubmissionResult(
        submission_id=str(untimed.submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="python", mode="test", status="passed", device="cpu",
    )  # fmt: skip
    await _record(pool, untimed.job_id, result)
    assert (await submission(pool, timed.submission_id)).method == "seed"
    assert (await submission(pool, untimed.submission_id)).method is None


def _artifact(name: str, data: bytes) -> ProfileArtifact:
    return ProfileArtifact(name=name, data_b64=base64.b64encode(data).decode("ascii"))


def _profile_result(submission_id: int) -> SubmissionResult:
    """A passed profile run as a runner reports it: Nsight Compute's figures from the report recorded on an H100,
    and its files (the .ncu-rep is binary: every byte value must come back)."""
    kernels = parse_raw_page((NCU / "matmul_naive_h100.raw.csv").read_text())
    report = ProfileReport(
        case_index=3,
        case_name="m=4096, n=4096, k=4096",
        tool="NVIDIA Nsight Compute 2025.3.1",
        kernels=kernels,
        kernel_count=launch_count(kernels),
        formula_flops=2 * 4096**3,
        formula_bytes=3 * 4096 * 4096 * 4,
        notes=["the kernel reads each input 4096 times from L2"],
        artifacts=[
            _artifact("details.txt", (NCU / "matmul_naive_h100.details.txt").read_bytes()),
            _artifact("profile.ncu-rep", (NCU / "matmul_naive_h100.ncu-rep").read_bytes()),
            _artifact("kernel.ptx", b".version 8.8\n.target sm_90\n"),
            _artifact("empty.sass", b""),
        ],
    )
    test = wire.TestOutcome(index=3, name="m=4096", dims=[4096, 4096, 4096], passed=True, message="ok")
    return SubmissionResult(
        submission_id=str(submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="cuda", mode="profile", status="passed", device="NVIDIA H100 80GB HBM3", tests=[test],
        phase_seconds={"compile": 1.25 + THIRD, "test": 0.5, "profile": 31.0 + THIRD}, profile=report,
    )  # fmt: skip


async def test_a_profile_result_reads_back_equal_with_its_report_and_files(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", language="cuda", mode="profile", profile_case=3), ROOMY)
    reported = _profile_result(receipt.submission_id)
    assert reported.profile is not None and reported.profile.kernels  # the fixture was read
    await _record(pool, receipt.job_id, reported)

    sub = await submission(pool, receipt.submission_id)
    assert sub.profile_case == 3
    assert await load_result(pool, sub) == reported
    detail = await submission_detail(pool, receipt.submission_id, "discord:alice")
    assert detail.result == reported


def _ranked(submission_id: int, method: str, score: float) -> SubmissionResult:
    timing = _timing(0, method, 1.0).model_copy(update={"gflops": score})
    return SubmissionResult(
        submission_id=str(submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="python", mode="ranked", status="passed", device="NVIDIA H100", timings=[timing],
        geomean_gflops=score, mean_gflops=score,
    )  # fmt: skip


async def _ranked_run(pool: asyncpg.Pool, user: str, method: str, score: float) -> int:
    receipt = await submit(pool, request(user), ROOMY)
    await _record(pool, receipt.job_id, _ranked(receipt.submission_id, method, score))
    return receipt.submission_id


async def test_arena_and_seed_times_rank_on_separate_boards(pool: asyncpg.Pool):
    await add_problems(pool)
    await _ranked_run(pool, "alice", "arena", 100.0)
    await _ranked_run(pool, "carol", "arena", 50.0)
    await _ranked_run(pool, "bob", "seed", 1000.0)  # the seed's mean would top an arena board it never ran on

    arena = await get_leaderboard(pool, "vector_add", "h100", method="arena")
    seed = await get_leaderboard(pool, "vector_add", "h100", method="seed")
    assert arena.method == "arena" and [r.display_name for r in arena.rows] == ["alice", "carol"]
    assert seed.method == "seed" and [r.display_name for r in seed.rows] == ["bob"]
    # Without a method, the fullest board is shown, and it says which method ranked it.
    default = await get_leaderboard(pool, "vector_add", "h100")
    assert default.method == "arena" and [r.display_name for r in default.rows] == ["alice", "carol"]
    assert await get_rank(pool, "vector_add", "h100", "float32", "discord:bob") is None
    bob = await get_rank(pool, "vector_add", "h100", "float32", "discord:bob", method="seed")
    assert bob is not None and bob.rank == 1
    _, boards = await list_boards(pool, "vector_add")
    assert [(b.gpu_type, b.method, b.entries) for b in boards] == [("h100", "arena", 2), ("h100", "seed", 1)]


async def test_a_user_who_ranked_by_two_methods_has_a_place_on_each_board(pool: asyncpg.Pool):
    await add_problems(pool)
    await _ranked_run(pool, "alice", "arena", 100.0)
    await _ranked_run(pool, "alice", "seed", 900.0)
    stats = await user_stats(pool, "discord:alice", "alice", RateLimitSettings())
    assert sorted((s.method, s.rank, s.score) for s in stats.standings) == [("arena", 1, 100.0), ("seed", 1, 900.0)]


async def test_a_rerun_timed_by_another_method_leaves_the_old_methods_board(pool: asyncpg.Pool):
    await add_problems(pool)
    first = await submit(pool, request("alice"), ROOMY)
    await _record(pool, first.job_id, _ranked(first.submission_id, "arena", 100.0))
    job_id = await rerun_submission(pool, MOD, first.submission_id, "new runner")
    await _record(pool, job_id, _ranked(first.submission_id, "seed", 200.0))
    assert (await get_leaderboard(pool, "vector_add", "h100", method="arena")).rows == []
    seed = await get_leaderboard(pool, "vector_add", "h100", method="seed")
    assert [(r.display_name, r.score) for r in seed.rows] == [("alice", 200.0)]


async def test_migrating_an_older_store_fills_in_each_submissions_method_and_rebuilds_the_boards(empty_dsn: str):
    first, *_ = discover()
    conn = await asyncpg.connect(empty_dsn)
    try:
        await migrate(conn, [first])
        await conn.execute(
            """
            INSERT INTO users (external_id, display_name) VALUES ('discord:a', 'a'), ('discord:b', 'b');
            INSERT INTO problems (id, slug, title, current_version) OVERRIDING SYSTEM VALUE
                VALUES (1, 'vector_add', 'Vector addition', 1);
            INSERT INTO problem_versions (problem_id, version, dtypes)
                VALUES (1, 1, ARRAY['float32']);
            INSERT INTO sources (sha256, body, size_bytes) VALUES (decode(repeat('ab', 32), 'hex'), 'x', 1);
            """
        )
        # Three ranked, passed submissions of one board: a seed-timed one on a GPU, an untimed-row one on a GPU,
        # and one on a CPU runner.
        for sub_id, user_id, gpu_type, score, method in (
            (1, 1, "h100", 100.0, "seed"),
            (2, 2, "h100", 50.0, None),
            (3, 1, "cpu", 5.0, None),
        ):
            await conn.execute(
                """
                INSERT INTO submissions (id, user_id, problem_id, problem_version, source_sha256, file_name, language,
                    dtype, mode, gpu_type, status, score, mean_score, score_metric)
                OVERRIDING SYSTEM VALUE
                VALUES ($1, $2, 1, 1, decode(repeat('ab', 32), 'hex'), 'a.py', 'python', 'float32', 'ranked', $3,
                    'passed', $4, $4, 'gflops')
                """,
                sub_id,
                user_id,
                gpu_type,
                score,
            )
            await conn.execute(
                "INSERT INTO jobs (id, submission_id, gpu_type, state) OVERRIDING SYSTEM VALUE "
                "VALUES ($1, $1, $2, 'done')",
                sub_id,
                gpu_type,
            )
            await conn.execute("UPDATE submissions SET result_job_id = $1 WHERE id = $1", sub_id)
            if method is not None:
                await conn.execute(
                    """
                    INSERT INTO case_results (job_id, kind, idx, name, dims, method, runtime_median_us, runtime_mean_us,
                        gflops, gflops_mean, gbps, flops, bytes, samples, cv, converged)
                    VALUES ($1, 'benchmark', 0, 'n=1', ARRAY[1], $2, 1, 1, $3, $3, 1, 1, 1, 5, 0.01, true)
                    """,
                    sub_id,
                    method,
                    score,
                )
        await conn.execute(
            """
            INSERT INTO leaderboard_entries (problem_id, problem_version, gpu_type, dtype, language, user_id,
                submission_id, score, submitted_at)
            SELECT problem_id, problem_version, gpu_type, dtype, 'any', user_id, id, score, created_at FROM submissions
            """
        )
        await migrate(conn)
        methods = await conn.fetch("SELECT id, method, geomean_gflops FROM submissions ORDER BY id")
        assert [(r["id"], r["method"], r["geomean_gflops"]) for r in methods] == [
            (1, "seed", 100.0),
            (2, "arena", 50.0),
            (3, "cpu", 5.0),
        ]
        entries = await conn.fetch(
            "SELECT gpu_type, method, language, submission_id FROM leaderboard_entries ORDER BY submission_id, language"
        )
        assert [tuple(r) for r in entries] == [
            ("h100", "seed", "any", 1),
            ("h100", "seed", "python", 1),
            ("h100", "arena", "any", 2),
            ("h100", "arena", "python", 2),
            ("cpu", "cpu", "any", 3),
            ("cpu", "cpu", "python", 3),
        ]
    finally:
        await conn.close()


async def test_a_result_stored_in_one_statement_reads_back_equal_to_what_the_runner_reported(pool: asyncpg.Pool):
    # Not ranked and no profile: `finish_with_result` alone, outside any transaction of the caller's.
    await add_problems(pool)
    receipt = await submit(pool, request("alice", language="cuda", dtype="float16", mode="benchmark"), ROOMY)
    reported = _full_result(receipt.submission_id).model_copy(update={"mode": "benchmark"})
    await _record(pool, receipt.job_id, reported)

    sub = await submission(pool, receipt.submission_id)
    assert await load_result(pool, sub) == reported
    moves = [(t.from_state, t.to_state, t.note) for t in await jobs.transitions(pool, receipt.job_id)]
    assert moves == [("queued", "dispatched", None), ("dispatched", "done", "failed: wrong_answer")]
    assert (sub.status, sub.result_job_id, sub.finished_at is not None) == ("failed", receipt.job_id, True)


async def test_a_result_for_another_job_is_recorded_as_an_error_with_its_cases(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="benchmark"), ROOMY)
    # The runner answered for float16; the submission asked for float32.
    other = _full_result(receipt.submission_id).model_copy(
        update={"mode": "benchmark", "language": "python", "status": "passed", "error": None}
    )
    await _record(pool, receipt.job_id, other)

    sub = await submission(pool, receipt.submission_id)
    assert (sub.status, sub.error_code, sub.score) == ("error", "internal", None)
    assert len(await submissions.case_results(pool, receipt.job_id)) == len(other.tests) + len(other.timings)
    assert (await jobs.get_job(pool, receipt.job_id)).state == "done"  # type: ignore[union-attr]


async def test_a_lost_lease_stores_nothing_of_the_result(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="test"), ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    assert lease is not None
    (taken,) = await jobs.take_over(pool, "test-owner", 30.0, include_own=True)  # a new token: the old one is void
    result = SubmissionResult(
        submission_id=str(receipt.submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="python", mode="test", status="passed", device="cpu",
        tests=[wire.TestOutcome(index=0, name="n=1", dims=[1], passed=True, message="ok")],
    )  # fmt: skip
    assert not await record_result(pool, lease, result, "test-runner")
    assert await submissions.case_results(pool, receipt.job_id) == []
    assert (await submission(pool, receipt.submission_id)).status == "queued"
    assert await record_result(pool, taken, result, "test-runner")


async def test_a_service_fault_gives_the_users_token_back_in_the_one_statement(pool: asyncpg.Pool):
    await add_problems(pool)
    limits = RateLimitSettings(test_burst=2)
    receipt = await submit(pool, request("alice", mode="test"), limits)
    user_id = (await submission(pool, receipt.submission_id)).user_id
    before = await ratelimits.peek(pool, user_id, "test", 2, limits.test_per_hour)
    broken = SubmissionResult(
        submission_id=str(receipt.submission_id), problem_slug="vector_add", problem_version=1, dtype="float32",
        language="python", mode="test", status="error", device="cpu",
        error=ErrorInfo(code="internal", message="The runner broke."),
    )  # fmt: skip
    await _record(pool, receipt.job_id, broken)
    assert await ratelimits.peek(pool, user_id, "test", 2, limits.test_per_hour) == pytest.approx(before + 1, abs=0.01)
    assert (await jobs.get_job(pool, receipt.job_id)).state == "error"  # type: ignore[union-attr]


async def test_the_case_rows_arrays_have_the_tables_column_types(pool: asyncpg.Pool):
    rows = await pool.fetch(
        "SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = 'case_results'"
    )
    stored = {r["column_name"]: r["udt_name"] for r in rows}
    assert set(stored) == {"job_id", *submissions._CASE_COLUMNS}
    sent = dict(zip(submissions._CASE_COLUMNS, submissions.CASE_TYPES, strict=True))
    # Cast back in the statement: the array's text and the JSON's text.
    cast_back = (sent.pop("dims"), stored.pop("dims"), sent.pop("details"), stored.pop("details"))
    assert cast_back == ("text", "_int8", "text", "jsonb")
    assert {column: stored[column] for column in sent} == sent
