"""What a user reads of a failed job names only the job's own things: an import error shows the submission's file
relative to the job, not the host folder of its scratch area, and a job the runner killed at its deadline shows
no line of the sandbox's own tools. Real sandbox, real workers."""

from __future__ import annotations

import secrets
from pathlib import Path

from runner.host.executor import Executor
from runner.host.process import UNSHARE_KILLED_NOISE, without_unshare_noise
from runner.job.run import run_job
from tests.runner.conftest import job_request, settings_for, submission

NAMES_ITS_FILE = """
raise ImportError(f"cannot load the tables next to {__file__}")


def solution(input_a, input_b, output_c, n):
    pass
"""


async def test_an_import_error_shows_the_file_relative_to_the_job(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))
    result = await run_job(job_request(NAMES_ITS_FILE), executor=executor)
    assert result.error is not None and result.error.code == "import_error", result.error
    assert "cannot load the tables next to submission.py" in result.error.message
    shown = result.error.message + (result.error.log or "")
    assert str(state_dir) not in shown and "scratch" not in shown, shown


async def test_a_timeout_log_holds_no_line_of_unshare(state_dir: Path) -> None:
    """The runner kills the sandbox's init at the deadline; `unshare --fork` then reports that it could not end
    itself with the same signal. That line is the runner's noise. Without a cgroup: where one holds the job,
    the runner kills `unshare` along with it, and the line never comes."""
    settings = settings_for(state_dir, secrets.token_hex(24), memory_cgroup="off")
    executor = await Executor.from_settings(settings)
    result = await run_job(job_request(submission("infinite_loop.py")), executor=executor)
    assert result.error is not None and result.error.code == "timeout", result.error
    assert "sigprocmask" not in (result.error.log or ""), result.error.log


def test_only_the_unshare_line_is_dropped() -> None:
    text = f"before\n{UNSHARE_KILLED_NOISE}: Invalid argument\nafter: {UNSHARE_KILLED_NOISE}\n"
    assert without_unshare_noise(text) == f"before\nafter: {UNSHARE_KILLED_NOISE}\n"
