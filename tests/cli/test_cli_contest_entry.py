"""`arena submit --mode ranked` says what the run counts for, as a user runs it: on stderr at once when it will count
for no contest, under the result table, and as `contests` in --json. The embedded store and the local CPU runner."""

from __future__ import annotations

import json
import re
import tempfile
import time

from tests.cli.harness import arena, arena_env

SUBMIT = (
    "submit",
    "vector_add",
    "examples/vector_add.py",
    "--device",
    "cpu",
    "--mode",
    "ranked",
    "--max-seconds",
    "0.3",
)


def test_a_ranked_submit_says_which_contest_counts_it_or_why_none_does():
    env = arena_env(tempfile.mkdtemp(prefix="arena-cli-entry-"))
    for slug, start in (("soon", "in 15s"), ("later", "in 2h")):
        created = arena(
            "contest", "create", slug, "--title", slug, "--problems", "vector_add", "--gpus", "cpu",
            "--start", start, "--end", "in 3h", env=env,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        if slug == "soon":
            # Once the command has returned, its "in 15s" was set: waiting 15 s from here outlasts it, however
            # long the command took to start on a loaded machine.
            started = time.monotonic()

    early = arena(*SUBMIT, env=env)
    assert early.returncode in (0, 1), early.stderr  # 1: a busy host's verdict on a loaded machine
    # Told as soon as the run is stored, before its phases; and again under the result.
    assert re.search(r"  this run counts for no contest: `soon` starts in \d+ s \(", early.stderr), early.stderr
    assert early.stderr.index("counts for no contest") < early.stderr.index("recorded as submission")
    last = early.stdout.rstrip().splitlines()[-1]
    assert last.startswith("this run counts for no contest: ") and "`later` starts in " in last, early.stdout

    time.sleep(max(0.0, 15.5 - (time.monotonic() - started)))
    counted = arena(*SUBMIT, "--json", env=env)
    assert "counts for no contest" not in counted.stderr  # nothing to warn about when it was stored
    document = json.loads(counted.stdout)
    contests = document["contests"]
    if document["status"] != "passed":  # a busy host's verdict on a loaded machine: the run ranks nowhere
        assert [e["status"] for e in contests["entries"]] == ["did_not_pass", "not_started"], counted.stdout
        return
    assert counted.returncode == 0, counted.stderr
    assert contests["counts_for"] == ["soon"]
    assert [(e["contest"], e["status"], e["board"]) for e in contests["entries"]] == [
        ("soon", "counts", "contest"),
        ("later", "not_started", None),
    ]
    assert contests["line"].startswith("counts for contest `soon`; `later` starts in ")

    practice = arena(*SUBMIT[:6], "benchmark", "--json", "--max-seconds", "0.3", env=env)
    assert practice.returncode in (0, 1), practice.stderr
    assert "contests" not in json.loads(practice.stdout)
