"""`arena leaderboard --json` shows each entry's timing protocol, and `arena rejudge` re-runs the older ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.protocol import protocol_version

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("arena-cli-rejudge")


def _arena(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "ARENA_DATABASE_URL")}
    env["ARENA_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
    )


def test_the_board_names_each_entry_protocol_and_rejudge_reruns_on_request(data_dir: Path) -> None:
    ranked = _arena(
        data_dir, "submit", "vector_add", "examples/vector_add.py", "--device", "cpu", "--mode", "ranked",
        "--max-seconds", "0.3",
    )  # fmt: skip
    assert ranked.returncode == 0, ranked.stderr
    board = _arena(data_dir, "leaderboard", "vector_add", "--gpu", "cpu", "--json")
    assert board.returncode == 0, board.stderr
    shown = json.loads(board.stdout)
    assert shown["protocol"] == protocol_version()
    [entry] = shown["entries"]
    assert entry["protocol"] == protocol_version() and entry["older_protocol"] is False
    assert "older timing protocol" not in _arena(data_dir, "leaderboard", "vector_add", "--gpu", "cpu").stdout

    nothing = _arena(data_dir, "rejudge", "vector_add", "--gpu", "cpu", "--json")
    assert nothing.returncode == 0, nothing.stderr
    [skipped] = json.loads(nothing.stdout)["entries"]
    assert skipped["job_id"] is None and "current protocol" in skipped["skipped"]

    forced = _arena(data_dir, "rejudge", "vector_add", "--gpu", "cpu", "--all")
    assert forced.returncode == 0, forced.stderr
    assert "1 of 1 re-run under" in forced.stdout and "job 2" in forced.stdout


def test_errors_come_as_json_with_json(data_dir: Path) -> None:
    for command in (("rejudge", "no-such-problem", "--gpu", "cpu"), ("leaderboard", "no-such-problem")):
        proc = _arena(data_dir, *command, "--json")
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert "no-such-problem" in json.loads(proc.stdout)["error"]["message"]
    too_many = _arena(data_dir, "rejudge", "vector_add", "--gpu", "cpu", "--top", "1000", "--json")
    assert too_many.returncode == 2 and "between 1 and 100" in json.loads(too_many.stdout)["error"]["message"]
