"""`arena contest` and `arena rating(s)` as a user runs them: a contest from creation to its frozen board and the
ratings it gave, on the embedded store and the local CPU runner."""

from __future__ import annotations

import json
import tempfile
import time

from tests.cli.harness import arena, arena_env


def _rows(text: str) -> list[list[str]]:
    """A printed table's rows: the lines whose first word is a place number."""
    return [words for words in (line.split() for line in text.splitlines()) if words and words[0].isdigit()]


def test_a_contest_runs_from_creation_to_a_frozen_board_and_ratings():
    data_dir = tempfile.mkdtemp(prefix="arena-cli-contest-")
    env = arena_env(data_dir)
    created = arena(
        "contest", "create", "sprint", "--title", "Sprint", "--problems", "vector_add", "--gpus", "cpu",
        "--start", "in 3s", "--end", "in 10m", env=env,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "Sprint (sprint) · upcoming · public" in created.stdout
    time.sleep(3.5)
    for user in ("ada", "bob"):
        submitted = arena(
            "submit", "vector_add", "examples/vector_add.py", "--device", "cpu", "--mode", "ranked",
            "--max-seconds", "0.3", env={**env, "ARENA_LOCAL_USER": user},
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
    live = arena("contest", "show", "sprint", env=env)
    assert live.returncode == 0, live.stderr
    assert "running" in live.stdout and "live board" in live.stdout
    assert {row[1] for row in _rows(live.stdout)} == {"ada", "bob"}

    # A running contest may end sooner; then the freeze makes its board final and rates it, once.
    assert arena("contest", "edit", "sprint", "--end", "in 2s", "--reason", "test", env=env).returncode == 0
    time.sleep(2.5)
    frozen = arena("contest", "freeze", env=env)
    assert frozen.returncode == 0, frozen.stderr
    assert "froze sprint: podium #1" in frozen.stdout and "2 ratings updated" in frozen.stdout
    assert "No contest is due to freeze." in arena("contest", "freeze", env=env).stdout

    final = arena("contest", "show", "sprint", env=env)
    assert "frozen" in final.stdout and "final board (frozen)" in final.stdout
    ratings = arena("ratings", env=env)
    assert ratings.returncode == 0, ratings.stderr
    rows = _rows(ratings.stdout)
    assert sorted(row[1] for row in rows) == ["ada", "bob"]
    assert rows[0][3] != rows[1][3]  # one won, one lost: their ratings moved apart from 1500
    card = arena("rating", "--user", "ada", env=env)
    assert "after 1 contest(s)" in card.stdout and "sprint" in card.stdout
    assert "has no rating yet" in arena("rating", "--user", "carol", env=env).stdout

    # The same answers as JSON, for a script or an agent: the final board, the table and one card.
    board = json.loads(arena("contest", "show", "sprint", "--json", env=env).stdout)
    assert board["contest"]["state"] == "frozen" and board["board"]["frozen"] is True
    assert sorted(line["display_name"] for line in board["board"]["lines"]) == ["ada", "bob"]
    table = json.loads(arena("ratings", "--json", env=env).stdout)["ratings"]
    assert [r["place"] for r in table] == [1, 2] and table[0]["conservative"] > table[1]["conservative"]
    ada = json.loads(arena("rating", "--user", "ada", "--json", env=env).stdout)
    assert ada["current"]["contests"] == 1 and [h["contest_slug"] for h in ada["history"]] == ["sprint"]


def _a_gpu_type_this_machine_lacks() -> str:
    """A registry key that is not this machine's runner: the CLI's own runner serves only what it detects."""
    from runner.clients.local import detect_gpu_type

    here = detect_gpu_type("auto")
    return next(key for key in ("h200", "h100") if key != here)


def test_contest_targets_are_checked_and_a_gpu_without_a_runner_here_is_warned_about():
    env = arena_env(tempfile.mkdtemp(prefix="arena-cli-contest-targets-"))
    window = ("--start", "in 1h", "--end", "in 2h")
    unknown = arena(
        "contest", "create", "cup", "--title", "Cup", "--problems", "vector_add", "--gpus", "h1000", *window, env=env
    )
    assert unknown.returncode == 2, unknown.stderr
    assert "`h1000` is not a GPU type the arena knows; choose among" in unknown.stderr
    assert "`h100`" in unknown.stderr and "Did you mean `h100`" in unknown.stderr

    no_dtype = arena(
        "contest", "create", "cup", "--title", "Cup", "--problems", "vector_add,cumsum", "--gpus", "cpu",
        "--dtypes", "float16", *window, env=env,
    )  # fmt: skip
    assert no_dtype.returncode == 2, no_dtype.stderr
    assert "`cumsum` does not take float16" in no_dtype.stderr
    assert "No contests yet" in arena("contest", "list", env=env).stdout

    served = arena(
        "contest", "create", "cup", "--title", "Cup", "--problems", "vector_add", "--gpus", "cpu", *window, env=env
    )
    assert served.returncode == 0, served.stderr
    assert "warning" not in served.stderr

    elsewhere = _a_gpu_type_this_machine_lacks()
    unserved = arena("contest", "edit", "cup", "--gpus", f"cpu,{elsewhere}", "--dtypes", "float32", env=env)
    assert unserved.returncode == 0, unserved.stderr
    assert f"warning: No runner serves `{elsewhere}`: nobody can enter `cup` there until one does." in unserved.stderr
    assert f"targets: cpu/float32, {elsewhere}/float32" in unserved.stdout


def test_a_contest_reserves_a_share_of_its_pool_and_says_so():
    env = arena_env(tempfile.mkdtemp(prefix="arena-cli-contest-reserve-"))
    window = ("--start", "in 1h", "--end", "in 2h")
    common = ("--title", "Cup", "--problems", "vector_add", "--gpus", "cpu", *window)
    too_much = arena("contest", "create", "cup", *common, "--reserve-share", "1.5", env=env)
    assert too_much.returncode == 2, too_much.stderr
    assert "more than 0 and at most 1" in too_much.stderr
    created = arena("contest", "create", "cup", *common, "--reserve-share", "0.25", env=env)
    assert created.returncode == 0, created.stderr
    assert "reserves 25% of its pools while it runs" in created.stdout
    edited = arena("contest", "edit", "cup", "--reserve-share", "0", env=env)
    assert edited.returncode == 0, edited.stderr
    assert "reserves" not in edited.stdout
