"""A contest's podium is run a second time before its board freezes.

One lucky measurement, or one runner whose GPU reads fast, must not decide a podium. So once a contest has ended
and its last runs are judged, the freeze (core/contests/freezing.py) queues one check of every run on the live
podium: a new job of the same submission, kept from the runner that timed the first run for `AVOID_RUNNER_S`
while another runner of the pool may take it. A check leaves its submission's verdict alone; its case rows are its
own, and its verdict (`core/store/podium_checks.py`) is one of:

- `agreed`: the two scores are within the canary threshold of each other (`core.canary`: 10 % on a GPU, a factor
  of 2 on CPU runners, whose pools mix machines). The first run stands.
- `disagreed`: they are not. The slower of the two is the one on the board, since the honest time is the larger
  one: a check that reads slower replaces the first run (with a note that says why), and a check that reads faster
  changes nothing. A podium that changed is checked again, for its new entrants, before the freeze.
- `failed`: the check did not pass (the service's fault or the run's). The first run stands, and the freeze's
  report names it.

A pool with a single runner (or a statically configured one, which the store does not list) checks on that same
runner: the second run still catches a lucky measurement, not a fast GPU, and the check's `same_runner` says so. A
check that no runner takes before the freeze's grace period is over is left out, like any late run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.canary import CPU_LIMIT, GPU_LIMIT
from core.store import jobs, podium_checks, submissions
from core.store.podium_checks import PodiumCheck
from core.store.pool import Conn

if TYPE_CHECKING:  # core.results imports this module, and the contests package imports core.results' callers
    from core.contests.boards import ContestBoard

log = logging.getLogger(__name__)


def check_limit(gpu_type: str) -> float:
    """The canary threshold of the pool: how far two runs of one submission may stray before they disagree."""
    return CPU_LIMIT if gpu_type == "cpu" else GPU_LIMIT


def runs_agree(first_score: float, check_score: float, limit: float) -> bool:
    """Whether two scores of one submission are within `limit` of each other (0.1: 10 % either way)."""
    ratio = check_score / first_score
    return 1 / (1 + limit) <= ratio <= 1 + limit


@dataclass(frozen=True)
class PodiumReport:
    """A frozen contest's checks: every one, and those that did not agree."""

    checks: tuple[PodiumCheck, ...]

    @property
    def disagreed(self) -> tuple[PodiumCheck, ...]:
        return tuple(c for c in self.checks if c.verdict == "disagreed")

    @property
    def failed(self) -> tuple[PodiumCheck, ...]:
        return tuple(c for c in self.checks if c.verdict in ("failed", "pending"))

    @property
    def same_runner(self) -> bool:
        """Every finished check ran where its first run did: the pool had one runner."""
        done = [c for c in self.checks if c.check_runner is not None]
        return bool(done) and all(c.same_runner for c in done)


async def queue_checks(conn: Conn, board: ContestBoard) -> list[int]:
    """Queue a check of every podium run of `board` that has none yet; the new jobs' ids (none: all checked)."""
    contest_id = board.contest.id
    checked = {c.submission_id for c in await podium_checks.contest_checks(conn, contest_id)}
    queued: list[int] = []
    for line in board.podium:
        for cell in line.cells:
            if cell.submission_id is None or cell.submission_id in checked:
                continue
            sub = await submissions.get_submission(conn, cell.submission_id, lock=True)
            if sub is None or sub.score is None:
                continue
            others = await podium_checks.other_live_runners(conn, sub.gpu_type, sub.runner)
            avoid = sub.runner if others else None
            job_id = await jobs.enqueue_check(conn, sub.id, sub.gpu_type, avoid)
            await podium_checks.insert_check(conn, contest_id, sub.id, sub.result_job_id, sub.runner, sub.score, job_id)
            checked.add(sub.id)
            queued.append(job_id)
    if queued:
        log.info("contest %s: podium checks queued as jobs %s", board.contest.slug, queued)
    return queued


async def podium_report(conn: Conn, contest_id: int) -> PodiumReport:
    return PodiumReport(tuple(await podium_checks.contest_checks(conn, contest_id)))


def podium_line(report: PodiumReport) -> str | None:
    """One line on how the podium's second runs went, for the freeze's announcement; None when none ran."""
    if not report.checks:
        return None
    where = "on the same runner (the pool has one)" if report.same_runner else "on a second runner where one was free"
    line = f"Every podium run was run a second time {where} before the freeze"
    if report.disagreed:
        line += (
            f"; {len(report.disagreed)} of {len(report.checks)} read outside the canary threshold, and the slower "
            "of the two runs counts"
        )
    else:
        line += f"; all {len(report.checks)} agreed within the canary threshold"
    if report.failed:
        line += f"; {len(report.failed)} did not finish, and the first run stands"
    return line + "."
