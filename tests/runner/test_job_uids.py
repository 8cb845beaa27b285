"""Root daemons on one host claim distinct blocks of job uids (runner.host.job_uids): two daemons' jobs never share a
uid, whose task count RLIMIT_NPROC takes host-wide and whose leftovers are reaped by killing all it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from runner.host.job_uids import UIDS_PER_RUNNER, claim_uid_base

ROOT = Path(__file__).resolve().parents[2]
# A process that claims its block, says which, and holds it until its stdin closes.
_HOLDER = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from runner.host.job_uids import claim_uid_base
print(claim_uid_base(int(sys.argv[2]), Path(sys.argv[3])), flush=True)
sys.stdin.read()
"""


def hold(directory: Path, configured: int) -> tuple[subprocess.Popen[str], int]:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(ROOT), str(configured), str(directory)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None
    return holder, int(holder.stdout.readline())


def release(holder: subprocess.Popen[str]) -> None:
    holder.communicate(timeout=30)


def test_runners_on_one_host_claim_distinct_blocks_and_a_block_frees_when_its_runner_ends(tmp_path: Path) -> None:
    first, first_base = hold(tmp_path, 70000)
    second, second_base = hold(tmp_path, 70000)
    try:
        assert first_base == 70000
        assert second_base == 70000 + UIDS_PER_RUNNER, "the next block, not the first runner's uids"
        release(first)
        third, third_base = hold(tmp_path, 70000)
        release(third)
        assert third_base == 70000, "the first block was freed when its runner ended"
    finally:
        for holder in (first, second):
            if holder.poll() is None:
                release(holder)


def test_one_process_keeps_its_block_for_every_sandbox_it_builds(tmp_path: Path) -> None:
    base = claim_uid_base(80000, tmp_path)
    assert claim_uid_base(80000, tmp_path) == base
    other, other_base = hold(tmp_path, 80000)
    release(other)
    assert other_base == base + UIDS_PER_RUNNER


def test_a_block_held_by_a_runner_killed_hard_is_free_again(tmp_path: Path) -> None:
    holder, base = hold(tmp_path, 90000)
    holder.kill()
    holder.communicate(timeout=30)
    again, again_base = hold(tmp_path, 90000)
    release(again)
    assert again_base == base, "the kernel drops a lock with its process, however it ended"
