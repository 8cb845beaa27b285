"""Embeds stay within Discord's limits in the worst cases, and say what matters."""

from __future__ import annotations

from datetime import UTC, datetime

import discord
import pytest

from bot.runners import RunnerStatus
from bot.ui.embeds import (
    CODE_BLOCK_LIMIT,
    RankChange,
    SubmissionHeader,
    log_attachment,
    render_announcement,
    render_progress,
    render_receipt,
    render_result,
    render_user_error,
)
from bot.ui.moderation import render_admission, render_runners
from bot.ui.pages import (
    PROBLEM_LINES_PER_PAGE,
    problem_list_pages,
    render_leaderboard,
    render_problem,
    render_problem_list,
    render_stats,
)
from contract import wire
from contract.wire import (
    CaseTiming,
    ErrorInfo,
    GpuInfo,
    HealthInfo,
    JobEvent,
    SubmissionResult,
    ValidateCheck,
    ValidateReport,
)
from core.admission import Candidate
from core.browse import LeaderboardPage, ProblemEntry, Standing, UserStats
from core.leaderboard import Board
from core.progress import ProgressState
from core.store.leaderboard import BoardRow
from core.store.problems import ProblemVersion
from problems.catalog import builtin_info
from runner.gpus import GPU_SPECS

H100 = GPU_SPECS["NVIDIA H100 80GB HBM3"]
LONG = "x" * 300
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def assert_fits(embed: discord.Embed) -> None:
    """Discord's limits: title 256, description 4096, 25 fields of 256/1024, footer 2048, 6000 in all."""
    data = embed.to_dict()
    assert len(embed) <= 6000
    assert len(data.get("title", "")) <= 256
    assert len(data.get("description", "")) <= 4096
    assert len(data.get("fields", [])) <= 25
    for field in data.get("fields", []):
        assert 1 <= len(field["name"]) <= 256 and 1 <= len(field["value"]) <= 1024
    assert len(data.get("footer", {}).get("text", "")) <= 2048


def header(**kw: object) -> SubmissionHeader:
    values = dict(
        submission_id=7, slug="matmul", user_name="ada", file_name="m.cu", language="cuda", dtype="float32",
        mode="ranked", gpu_type="h100",
    )  # fmt: skip
    values.update(kw)
    return SubmissionHeader(**values)  # type: ignore[arg-type]


def timing(i: int, name: str = "") -> CaseTiming:
    return CaseTiming(
        index=i, name=name or f"{1024 * (i + 1)}x1024x1024", dims=[1024, 1024, 1024], method="arena",
        runtime_median_us=61.1 + i, runtime_mean_us=62.0, gflops=35_000.0 / (i + 1), gflops_mean=34_000.0,
        gbps=100.0, flops=2 * 1024**3, bytes=12 * 1024**2, samples=10, cv=0.01, converged=True,
    )  # fmt: skip


def result(**kw: object) -> SubmissionResult:
    values: dict[str, object] = dict(
        submission_id="7", problem_slug="matmul", problem_version=1, dtype="float32", language="cuda",
        mode="ranked", status="passed", device="NVIDIA H100 80GB HBM3", timings=[timing(i) for i in range(4)],
        geomean_gflops=17_000.0, mean_gflops=20_000.0,
    )  # fmt: skip
    values.update(kw)
    return SubmissionResult(**values)  # type: ignore[arg-type]


def test_result_shows_the_table_with_percent_of_peak_and_the_rank_change() -> None:
    embed = render_result(7, result(), H100, RankChange(4, 2), header=header(), chart=True)
    assert_fits(embed)
    assert "52.2% FLOP" in embed.description  # 35 TFLOPS of the H100's 67 fp32
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Geometric mean GFLOPS"] == "17,000" and fields["Leaderboard"] == "#4 → #2 (up 2)"
    assert embed.image.url == "attachment://roofline.png"


def test_result_with_many_long_cases_still_fits() -> None:
    timings = [timing(i, name=f"case-{i}-" + "y" * 80) for i in range(64)]
    embed = render_result(7, result(timings=timings), H100, RankChange(None, 1), header=header(user_name=LONG))
    assert_fits(embed)
    assert "(truncated)" in embed.description


def test_a_huge_compile_log_is_trimmed_and_attached() -> None:
    log = "error: expected ';'\n" * 5000
    failed = result(status="error", timings=[], error=ErrorInfo(code="compile_error", message=LONG * 20, log=log))
    embed = render_result(7, failed, H100, header=header())
    assert_fits(embed)
    assert "compile error" in embed.description and "The full log is attached." in embed.description
    assert log_attachment(failed) == ("compile.log", log.encode())
    assert log_attachment(result(status="error", error=ErrorInfo(code="timeout", message="slow", log="short"))) is None
    assert len("x" * CODE_BLOCK_LIMIT) < len(log)


def test_a_wrong_answer_names_the_case_and_the_error_figures() -> None:
    details = {
        "max_abs_error": 2.5, "max_rel_error": 0.75, "mismatches": 3, "total": 1000,
        "first_mismatch_index": [999], "expected_at_mismatch": -0.25, "actual_at_mismatch": None,
    }  # fmt: skip
    test = wire.TestOutcome(index=0, name="n=1000", dims=[1000], passed=False, message="differs", details=details)
    error = ErrorInfo(code="wrong_answer", message="Wrong answer on case n=1000: max abs error 2.5")
    embed = render_result(7, result(status="failed", timings=[], tests=[test], error=error), H100, header=header())
    assert_fits(embed)
    assert embed.fields[0].name == "Failing case: n=1000"
    assert embed.fields[0].value == (
        "3 of 1,000 elements differ\nmax abs error 2.5\nmax rel error 0.75\nfirst at [999]: expected -0.25, got None"
    )


def test_progress_shows_test_and_benchmark_case_counts_and_stays_short() -> None:
    state = ProgressState(queue_position=3)
    assert render_progress(header(), state).description == "**⏳ Queued: position 3**"
    state.apply(JobEvent(seq=1, type="accepted", message="NVIDIA H100"))
    state.apply(JobEvent(seq=2, type="compiling", phase="nvcc"))
    state.apply(JobEvent(seq=3, type="compiled", message="in 1.2 s"))
    test = wire.TestOutcome(index=0, name="n=1", dims=[1], passed=True, message="ok")
    state.apply(JobEvent(seq=4, type="test_case", index=0, count=2, test=test))
    embed = render_progress(header(), state)
    assert embed.description.splitlines() == [
        "**🧪 Test case 1/2 on NVIDIA H100**", "✅ compiled in 1.2 s", "✅ test 1/2 `n=1`",
    ]  # fmt: skip
    for i in range(500):
        state.apply(JobEvent(seq=5 + i, type="benchmark_case", index=i, count=500, timing=timing(i, LONG)))
    embed = render_progress(header(), state)
    assert_fits(embed)
    assert embed.description.startswith("**⏱️ Benchmark case 500/500 on NVIDIA H100**\n…")


def test_the_receipt_says_the_queue_position_and_when_the_job_should_start() -> None:
    assert "queue position 3 · starts in about 2 minutes." in render_receipt(header(), 3, 2048, 90.0).description
    assert "queue position 3." in render_receipt(header(), 3, 2048).description  # no estimate to give yet


def test_receipt_announcement_and_user_errors_fit() -> None:
    assert_fits(render_receipt(header(file_name=LONG, slug=LONG), 3, 2048))
    announcement = render_announcement(header(user_name=LONG), result(), 1, 35_000.0, personal_best=True)
    assert_fits(announcement)
    assert announcement.title.startswith("🥇") and "**#1**" in announcement.description
    assert_fits(render_user_error("y" * 10_000))


@pytest.mark.parametrize(("before", "after", "text"), [
    (None, None, "not on the leaderboard"), (None, 3, "entered the leaderboard at #3"),
    (5, 5, "#5 (unchanged)"), (2, 4, "#2 → #4 (down 2)"),
])  # fmt: skip
def test_rank_change_wording(before: int | None, after: int | None, text: str) -> None:
    assert RankChange(before, after).describe() == text


def _problem(slug: str, enabled: bool = True, title: str = "T") -> ProblemVersion:
    return ProblemVersion(1, slug, title, enabled, 1, 1, None, ("float32",), "gflops", NOW)


def test_problem_pages_fit_and_list_every_problem_once() -> None:
    entries = [ProblemEntry(_problem(f"p{i}", i % 2 == 0, LONG[:200]), builtin_info("matmul")) for i in range(300)]
    pages = problem_list_pages(entries)
    assert len(pages) == 300 // PROBLEM_LINES_PER_PAGE + (300 % PROBLEM_LINES_PER_PAGE > 0)
    listed = []
    for page in pages:
        assert_fits(page)
        listed += [line.split("`")[1] for f in page.fields for line in f.value.splitlines()]
    assert listed == [f"p{i}" for i in range(300)]
    assert pages[1].fields[0].name.endswith("(continued)")
    assert_fits(render_problem_list(entries))
    embed = render_problem(ProblemEntry(_problem("matmul"), builtin_info("matmul")))
    assert_fits(embed)
    assert render_problem(ProblemEntry(_problem("gone", enabled=False), None)).description.endswith("disabled it).")


def test_leaderboard_and_stats_fit() -> None:
    rows = [BoardRow(i + 1, i, LONG, 100 + i, "triton", 1e6 / (i + 1), NOW) for i in range(25)]
    board = Board(_problem("matmul"), "h100", "float32", "any", rows)
    page = LeaderboardPage(board, 0, 25, True, rows[3])
    embed = render_leaderboard(page, LONG)
    assert_fits(embed)
    assert "◀" in embed.description and embed.fields[0].value.startswith("#4 with 250,000 GFLOPS")
    standings = [Standing(LONG, "h100", "float32", i, 1.5, "gbps", i) for i in range(40)]
    stats = UserStats(LONG, 100, {"passed": 60, "failed": 40}, 12, standings, {"test": 1, "ranked": 0}, [])
    assert_fits(render_stats(stats))


def test_a_distributed_board_and_run_say_their_world_size() -> None:
    # Its board key (`cpux2`) only encodes the ranks; a one-device problem on a pool so named says nothing more.
    ranked = header(slug="all-gather", file_name="a.py", language="python", gpu_type="cpux2")
    assert ranked.footer == "ada · a.py · python · ranked · cpux2 · 2 ranks"
    assert header(gpu_type="cpux2").footer.endswith("ranked · cpux2")
    board = Board(_problem("all-gather"), "cpux4", "float32", "any", [], "cpu")
    title = render_leaderboard(LeaderboardPage(board, 0, 10, False, None), "ada").title
    assert title == "🏆 all-gather · cpux4 · 4 ranks · float32 · cpu timing"


def test_admission_report_and_runners_fit() -> None:
    checks = [
        ValidateCheck(case=f"case {i} " + LONG, check="zeros", expect="fail", ok=i % 7 != 0, message="m")
        for i in range(100)
    ]
    report = ValidateReport(
        ok=False, slug="p", device="CPU", checks=checks, error=ErrorInfo(code="internal", message=LONG, log=LONG * 40)
    )
    info = builtin_info("vector_add")
    assert info is not None
    assert_fits(render_admission(Candidate(info, "src", report, None, "local-cpu")))
    gpus = [GpuInfo(index=i, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i}", capability="9.0") for i in range(8)]
    health = HealthInfo(
        status="ok", name="h", device="gpu", gpu_count=8, gpus=gpus, slots=8, free_slots=3, queue_depth=2,
        max_queue=16, sandbox="full", torch_loaded=False, torch="2.11", nvcc="13.0",
    )  # fmt: skip
    statuses = [RunnerStatus(LONG, "h100", "remote", 8, health, None) for _ in range(30)]
    statuses.append(RunnerStatus("down", "a100", "remote", 1, None, LONG * 3))
    assert_fits(render_runners(statuses, {"queued": 4, "running": 2, "done": 900}, 2))


def test_charts_drawn_by_many_threads_at_once_all_come_out() -> None:
    # The bot draws each finished result's chart in a worker thread; two results finishing together once made
    # matplotlib's text layout fail in one of them.
    from concurrent.futures import ThreadPoolExecutor

    from core.charts import render_roofline_png

    with ThreadPoolExecutor(max_workers=4) as pool:
        pngs = list(pool.map(lambda _: render_roofline_png(result(), H100), range(8)))
    assert len(pngs) == 8 and all(png.startswith(b"\x89PNG") for png in pngs)
