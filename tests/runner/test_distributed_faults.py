"""How the runner tells a rank killed from outside a distributed job from a submission that crashed its own rank
(runner/job/distributed.py: `ranks_killed_from_outside`): from the harness's own words for each rank, which these
tests hold the harness to on real processes, so that the runner's reading cannot drift from what it writes.

The service's side (the job answered `host_busy` and run again, stored once) is
tests/store/test_fleet_distributed_faults.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from contract.wire import ErrorInfo, JobRequest
from problems.distributed.registry import get_distributed_problem
from runner.distributed.exchange import RANK_EXITED, RANK_TIMED_OUT
from runner.distributed.harness import DistributedRun, wait_for_ranks
from runner.distributed.job import job_result
from runner.job.distributed import rank_log_entries, ranks_killed_from_outside

# Bounds for telling a stuck process from a slow one, never a timing under test.
DEADLINE_S = 60.0
# What a peer of a killed rank reports: gloo's error, raised inside the submission's own collective.
TRACEBACK = (
    'Traceback (most recent call last):\n  File "solution.py", line 9\nRuntimeError: Connection closed by peer\n'
)


def _rank(code: str) -> subprocess.Popen[bytes]:
    """A stand-in rank, started as the harness starts its ranks: stdout to nowhere, stderr to the harness."""
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )


def _killed_from_outside() -> subprocess.Popen[bytes]:
    """A rank that something outside the job kills with SIGKILL while it runs."""
    process = _rank("import time; print('ready', flush=True); time.sleep(600)")
    process.send_signal(signal.SIGKILL)
    return process


def _error(rank_errors: dict[int, str]) -> ErrorInfo:
    """The error the harness's result carries for these rank errors, as the judge of the run builds it."""
    request = JobRequest(
        submission_id="job-1",
        problem_slug="all-gather",
        language="python",
        file_name="solution.py",
        source="def solution(*args):\n    pass\n",
        dtype="float32",
        mode="test",
        world_size=2,
    )
    problem = get_distributed_problem("all-gather")
    run = DistributedRun("all-gather", 2, "float32", rank_errors=rank_errors)
    result = job_result(request, problem, problem.generate_test_cases("float32", "cpu"), run)
    assert result.error is not None
    return result.error


def test_the_harness_says_a_rank_killed_by_sigkill_exited_with_status_minus_nine() -> None:
    errors = wait_for_ranks([_rank("pass"), _killed_from_outside()], time.monotonic() + DEADLINE_S)
    assert errors == {1: f"{RANK_EXITED}{-signal.SIGKILL}"}


def test_a_rank_killed_after_printing_to_stderr_is_still_said_to_be_killed(tmp_path: Path) -> None:
    # What the rank wrote before the kill would otherwise stand in for its status, and the kill read as a crash.
    written = tmp_path / "written"
    process = _rank(
        "import pathlib, sys, time; sys.stderr.write('warming up'); sys.stderr.flush(); "
        f"pathlib.Path({str(written)!r}).touch(); time.sleep(600)"
    )
    waited = time.monotonic() + DEADLINE_S
    while not written.exists() and time.monotonic() < waited:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    errors = wait_for_ranks([_rank("pass"), process], time.monotonic() + DEADLINE_S)
    assert errors == {1: f"{RANK_EXITED}{-signal.SIGKILL}"}


def test_a_rank_killed_from_outside_is_told_apart_from_its_peers_errors() -> None:
    """The peer that was waiting on the killed rank raised inside the submission's collective: the log names
    it first, yet the kill is what stopped the run."""
    errors = wait_for_ranks([_killed_from_outside(), _rank("pass")], time.monotonic() + DEADLINE_S)
    error = _error({**errors, 1: TRACEBACK})
    assert error.code == "runtime_error"
    assert rank_log_entries(error.log or "") == {0: f"{RANK_EXITED}{-signal.SIGKILL}", 1: TRACEBACK.strip()}
    assert ranks_killed_from_outside(error) == [0]


def test_a_rank_that_crashed_by_itself_stays_the_submissions_error() -> None:
    """A segfault, an abort and `os._exit` are the submission's own doing: no rank reads as killed from outside."""
    crashes = [
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
        "import os; os.abort()",
        "import os; os._exit(3)",
    ]
    errors = wait_for_ranks([_rank(code) for code in crashes], time.monotonic() + DEADLINE_S)
    assert errors == {
        0: f"{RANK_EXITED}{-signal.SIGSEGV}",
        1: f"{RANK_EXITED}{-signal.SIGABRT}",
        2: f"{RANK_EXITED}3",
    }
    assert ranks_killed_from_outside(_error(errors)) == []
    assert ranks_killed_from_outside(_error({0: TRACEBACK, 1: TRACEBACK})) == []


def test_ranks_the_harness_killed_at_its_deadline_stay_the_submissions_timeout() -> None:
    """A rank that hangs is killed by the harness with every rank still running: those read as SIGKILLed too,
    but the harness's word for the hung rank says whose kill it was."""
    hung = [_rank("import time; time.sleep(600)"), _rank("import time; time.sleep(600)")]
    errors = wait_for_ranks(hung, time.monotonic() + 0.5)
    assert errors[0].startswith(RANK_TIMED_OUT)
    assert errors[1] in (f"{RANK_EXITED}{-signal.SIGKILL}", errors[0])
    assert ranks_killed_from_outside(_error(errors)) == []
    assert ranks_killed_from_outside(_error({0: errors[0], 1: f"{RANK_EXITED}{-signal.SIGKILL}"})) == []


def test_only_a_runtime_error_can_be_a_kill_from_outside() -> None:
    killed = _error({1: f"{RANK_EXITED}{-signal.SIGKILL}"})
    assert ranks_killed_from_outside(killed) == [1]
    assert ranks_killed_from_outside(killed.model_copy(update={"code": "wrong_answer"})) == []
    assert ranks_killed_from_outside(killed.model_copy(update={"log": None})) == []
    assert ranks_killed_from_outside(None) == []
