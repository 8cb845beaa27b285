"""The `arena` command line, run as a real subprocess the way a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# One embedded Postgres data directory for this module's runs, never the user's own.
DATA_DIR = tempfile.mkdtemp(prefix="arena-cli-tests-")


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "ARENA_DATABASE_URL")}
    env["ARENA_DATA_DIR"] = DATA_DIR
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def test_submit_example_prints_per_case_gflops_table_and_exits_zero():
    proc = arena("submit", "vector_add", "examples/vector_add.py", "--device", "cpu", "--max-seconds", "0.5")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case"))
    assert "GFLOPS" in header and "median" in header
    rows = [line for line in lines if line.startswith("n=")]
    assert len(rows) == 3
    for row in rows:
        gflops = float(row.split()[header.split().index("GFLOPS") + 2].replace(",", ""))
        assert gflops > 0
    assert "geometric mean" in proc.stdout
    assert "test 3/3" in proc.stderr and "benchmark 3/3" in proc.stderr
    assert "recorded as submission #" in proc.stderr


def test_ranked_submit_appears_on_the_local_leaderboard():
    proc = arena(
        "submit",
        "matrix-multiplication",
        "examples/matmul.py",
        "--device",
        "cpu",
        "--mode",
        "ranked",
        "--max-seconds",
        "0.3",
    )
    assert proc.returncode == 0, proc.stderr
    board = arena("leaderboard", "matrix-multiplication", "--gpu", "cpu")
    assert board.returncode == 0, board.stderr
    rows = [line for line in board.stdout.splitlines() if line.strip().startswith("1 ")]
    assert rows and "python" in rows[0]


def test_submit_wrong_answer_exits_nonzero_and_names_case_and_index():
    proc = arena("submit", "vector_add", "examples/vector_add_wrong.py", "--device", "cpu")
    assert proc.returncode == 1
    assert "wrong_answer" in proc.stdout
    assert "case n=7" in proc.stdout and "first at [6]" in proc.stdout  # the last element of the first case


def test_unknown_problem_suggests_close_names():
    proc = arena("submit", "matmull", "examples/matmul.py")
    assert proc.returncode == 2
    assert "Unknown problem 'matmull'" in proc.stderr and "'matmul'" in proc.stderr


def test_wrong_extension_is_refused_with_what_to_attach(tmp_path: Path):
    bad = tmp_path / "solution.txt"
    bad.write_text("print('hi')")
    proc = arena("submit", "vector_add", str(bad))
    assert proc.returncode == 2
    assert ".cu or .py" in proc.stderr


def test_json_output_is_a_submission_result(tmp_path: Path):
    from contract.wire import SubmissionResult

    proc = arena("submit", "matmul", "examples/matmul.py", "--device", "cpu", "--mode", "test", "--json")
    assert proc.returncode == 0, proc.stderr
    result = SubmissionResult.model_validate_json(proc.stdout)
    assert result.status == "passed" and len(result.tests) == 3


def test_problems_lists_every_builtin_problem():
    from problems.registry import builtin_problems

    proc = arena("problems")
    assert proc.returncode == 0
    for slug in builtin_problems():
        assert slug in proc.stdout


def test_show_gives_signature_formula_and_cases():
    proc = arena("show", "matrix-multiplication")
    assert proc.returncode == 0
    assert 'extern "C" void solution(const float* input_a' in proc.stdout
    assert "size_t m, size_t n, size_t k)" in proc.stdout
    assert "2 · M · N · K" in proc.stdout
    assert "m=4096,n=4096,k=4096" in proc.stdout


def test_starter_writes_a_file(tmp_path: Path):
    out = tmp_path / "s.cu"
    proc = arena("starter", "vector_add", "--lang", "cuda", "--dtype", "bfloat16", "-o", str(out))
    assert proc.returncode == 0
    text = out.read_text()
    assert "#include <cuda_bf16.h>" in text and "__nv_bfloat16* d_output" in text


def test_commands_needing_missing_packages_explain_and_others_still_work():
    block = "import sys; sys.modules['asyncpg'] = None; from arena.cli import main; sys.exit(main(sys.argv[1:]))"
    ok = subprocess.run(
        [sys.executable, "-c", block, "problems"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0 and "vector-addition" in ok.stdout
    refused = subprocess.run(
        [sys.executable, "-c", block, "db", "status"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2
    assert "needs the package asyncpg" in refused.stderr


def test_quota_lists_every_mode_with_its_limit_and_whats_left():
    proc = arena("quota", "--member", "discord:4242")
    assert proc.returncode == 0, proc.stderr
    assert "Submissions left for discord:4242" in proc.stdout
    table, queue = proc.stdout.split("\n\n")
    rows = {line.split()[0]: line for line in table.splitlines()[3:] if line.strip()}
    assert list(rows) == ["test", "benchmark", "ranked", "profile"]
    assert queue.strip() == "Queue: nothing queued"
    assert "2 at once, 6 an hour" in rows["profile"] and rows["profile"].endswith("2 of 2 left · full")
