"""Re-judging a board: its top entries timed under an older timing protocol, run again under the current one.

Every result carries the protocol that timed it (runner.protocol). When the judge's timing code or the service's
settings change, the boards mark the entries timed before (`core.leaderboard.older_protocol`), and a moderator
re-judges them: each is a real new run, a job queued on the board's own GPU pool like any other, so a runner of
that pool times it. The earlier job keeps its per-case results; the entry leaves the board while it runs and
comes back with the new run's score.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from core.errors import InvalidOptionError, ModerationError
from core.leaderboard import MAX_PAGE, get_leaderboard, older_protocol
from core.moderation import Actor, rerun_submission
from runner.protocol import protocol_version


@dataclass(frozen=True)
class Rejudged:
    """One entry of the board's top N: re-run (`job_id`), or not, and why (`skipped`)."""

    rank: int
    submission_id: int
    user: str
    protocol: str | None
    job_id: int | None = None
    skipped: str | None = None


async def rejudge_board(
    pool: asyncpg.Pool,
    actor: Actor,
    slug: str,
    gpu_type: str,
    dtype: str = "float32",
    *,
    method: str | None = None,
    top: int = 10,
    every: bool = False,
) -> list[Rejudged]:
    """Re-run the board's top `top` entries that were timed under another protocol than the current one (with
    `every`, all of them), each as a new job on the board's pool."""
    if not 1 <= top <= MAX_PAGE:
        raise InvalidOptionError(f"Re-judge between 1 and {MAX_PAGE} entries of a board.")
    board = await get_leaderboard(pool, slug, gpu_type, dtype, limit=top, method=method)
    current = protocol_version()
    done: list[Rejudged] = []
    for row in board.rows:
        entry = Rejudged(row.rank, row.submission_id, row.display_name, row.protocol)
        if not every and not older_protocol(row):
            done.append(_skipped(entry, f"already timed under the current protocol {current}"))
            continue
        reason = f"re-judged under timing protocol {current} (was {row.protocol or 'unversioned'})"
        try:
            job_id = await rerun_submission(pool, actor, row.submission_id, reason)
        except ModerationError as exc:
            done.append(_skipped(entry, exc.message))
            continue
        done.append(Rejudged(entry.rank, entry.submission_id, entry.user, entry.protocol, job_id))
    return done


def _skipped(entry: Rejudged, why: str) -> Rejudged:
    return Rejudged(entry.rank, entry.submission_id, entry.user, entry.protocol, None, why)
