"""A profile diff: two profiled runs of one problem on one GPU type, kernel by kernel (`core.views.profile_diff`).

`profile_diff(pool, viewer_id, a_id, b_id)` checks what the diff needs and says what to fix when it cannot be made:
both runs are of mode `profile` with a stored profile, of the same problem, on the same GPU type. The dtype and the
case may differ (comparing a float16 port with its float32 original is a question worth asking): the diff's notes
say so.

Who may read a run's profile follows the rules of its code (`core.contests.code_revealed`): a run is its author's,
and someone else's reads as one that does not exist (ids reveal nothing), unless the code it ran is revealed: the
same source as a ranked run of its author's that its contest has revealed. A profile shows how that code behaves on
the GPU, which anyone may learn by profiling the revealed code themselves.

Without B, the diff compares with the viewer's fastest other profile of the problem, GPU type, dtype and case;
failing that, with the profile of a board leader's revealed code (the best-placed of the board's top
`LEADERS_TRIED` whose leading run's code is revealed and who profiled that very source); failing that, it says
there is nothing to compare with and how to make something.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from contract.wire import BChoice, ProfileDiff, ProfiledRun, ProfileReport
from core.contests import code_revealed
from core.errors import (
    InvalidOptionError,
    NothingToCompareError,
    NotProfiledError,
    ProfilesNotComparableError,
    SubmissionNotFoundError,
)
from core.store import leaderboard, profiles, submissions, users
from core.store.leaderboard import BoardKey
from core.store.pool import Conn
from core.store.submissions import Submission
from core.views.profile_diff import diff_reports

# How far down a board a diff without B looks for a leader whose code is revealed and profiled.
LEADERS_TRIED = 20


def _not_found(submission_id: int) -> SubmissionNotFoundError:
    return SubmissionNotFoundError(
        f"There is no profiled run #{submission_id} you may read: your own runs, and runs of contest code once its "
        "contest revealed it, can be compared."
    )


async def profile_visible(conn: Conn, sub: Submission, viewer_id: int | None, now: datetime) -> bool:
    """Whether the viewer (None: someone with no runs at all) may read the run's profile at `now`."""
    if sub.user_id == viewer_id:
        return True
    if await code_revealed(conn, sub, now):
        return True
    for ranked_id in await profiles.ranked_runs_of_source(conn, sub.user_id, sub.problem_id, sub.source_sha256):
        ranked = await submissions.get_submission(conn, ranked_id)
        if ranked is not None and await code_revealed(conn, ranked, now):
            return True
    return False


async def _profiled(
    conn: Conn, submission_id: int, viewer_id: int | None, now: datetime
) -> tuple[Submission, ProfileReport]:
    """The run and its profile (without its files: a diff shows figures only), or the error that says why not."""
    sub = await submissions.get_submission(conn, submission_id)
    if sub is None or not await profile_visible(conn, sub, viewer_id, now):
        raise _not_found(submission_id)
    if sub.mode != "profile":
        raise NotProfiledError(
            f"Submission #{sub.id} is a {sub.mode} run, not a profile: submit its file again in mode `profile` "
            "(`--mode profile`), then compare that run."
        )
    stored = (
        None if sub.result_job_id is None else await profiles.get_profile(conn, sub.result_job_id, with_artifacts=False)
    )
    if stored is None:
        if sub.status in ("queued", "running"):
            why = "has not finished yet; compare it once its result is in"
        elif sub.status == "passed":
            why = "passed, but its runner sent no profile with the result; profile it again"
        else:
            why = f"ended `{sub.status}` before the profiler ran; fix what its result says, then profile it again"
        raise NotProfiledError(f"Profiled run #{sub.id} has no profile: it {why}.")
    return sub, ProfileReport.model_validate({**stored.report, "artifacts": []})


def _check_comparable(a: Submission, b: Submission) -> None:
    if a.id == b.id:
        raise InvalidOptionError(f"A and B are both run #{a.id}; name two different profiled runs.")
    if a.problem_id != b.problem_id:
        raise ProfilesNotComparableError(
            f"Run #{a.id} is of `{a.slug}` and run #{b.id} of `{b.slug}`: a diff compares two runs of one problem. "
            f"Name a profiled run of `{a.slug}` as B, or leave B out to compare with your fastest one."
        )
    if a.gpu_type != b.gpu_type:
        raise ProfilesNotComparableError(
            f"Run #{a.id} ran on `{a.gpu_type}` and run #{b.id} on `{b.gpu_type}`: times on two GPU types say more "
            f"about the GPUs than the code. Profile B on `{a.gpu_type}` too (`--gpu {a.gpu_type}`), then compare."
        )


async def _default_b(
    conn: Conn, a: Submission, report: ProfileReport, viewer_id: int | None, now: datetime
) -> tuple[int, BChoice] | None:
    """B when the viewer named none: their own fastest other profile, else a revealed leader's; None when neither."""
    same = {"problem_id": a.problem_id, "gpu_type": a.gpu_type, "dtype": a.dtype, "case_name": report.case_name}
    if viewer_id is not None:
        own = await profiles.fastest_profiled_run(conn, user_id=viewer_id, exclude_id=a.id, **same)
        if own is not None:
            return own, "own_fastest"
    methods = await leaderboard.board_methods(conn, a.problem_id, a.problem_version, a.gpu_type, a.dtype)
    if not methods:
        return None
    key = BoardKey(a.problem_id, a.problem_version, a.gpu_type, a.dtype, methods[0])  # the fullest board
    for row in await leaderboard.top(conn, key, limit=LEADERS_TRIED):
        if row.user_id == viewer_id:
            continue  # the viewer's own runs were looked at above
        leading = await submissions.get_submission(conn, row.submission_id)
        if leading is None or not await code_revealed(conn, leading, now):
            continue
        found = await profiles.fastest_profiled_run(
            conn, user_id=row.user_id, exclude_id=a.id, source_sha256=leading.source_sha256, **same
        )
        if found is not None:
            return found, "leader"
    return None


async def _side(conn: Conn, sub: Submission, report: ProfileReport) -> ProfiledRun:
    owner = await users.get_user(conn, sub.user_id)
    assert owner is not None, "a submission's user always exists"
    return ProfiledRun(
        submission_id=sub.id,
        owner=owner.display_name,
        file_name=sub.file_name,
        language=sub.language,
        dtype=sub.dtype,
        problem_version=sub.problem_version,
        device=sub.device or "unknown",
        case_index=report.case_index,
        case_name=report.case_name,
        tool=report.tool,
        created_at=sub.created_at,
    )


async def profile_diff(
    pool: asyncpg.Pool, viewer_id: int | None, a_id: int, b_id: int | None = None, *, now: datetime | None = None
) -> ProfileDiff:
    """The diff from run `a_id` to run `b_id` (None: chosen as the module says), as `viewer_id` (a user's id in the
    store; None for one who has never submitted) may read them at `now` (default: the clock)."""
    at = now or datetime.now(UTC)
    async with pool.acquire() as conn:
        a, a_report = await _profiled(conn, a_id, viewer_id, at)
        chosen: BChoice = "given"
        if b_id is None:
            found = await _default_b(conn, a, a_report, viewer_id, at)
            if found is None:
                raise NothingToCompareError(
                    f"Nothing to compare run #{a.id} with: you have no other profile of `{a.slug}` on `{a.gpu_type}` "
                    f"in {a.dtype} for case {a_report.case_name}, and no board leader's revealed code was profiled "
                    "there. Profile another version of your kernel (`--mode profile`), or name run B yourself."
                )
            b_id, chosen = found
        b, b_report = await _profiled(conn, b_id, viewer_id, at)
        _check_comparable(a, b)
        a_run, b_run = await _side(conn, a, a_report), await _side(conn, b, b_report)
    return diff_reports(a_run, a_report, b_run, b_report, problem=a.slug, gpu_type=a.gpu_type, b_chosen=chosen)


async def viewer_id_of(pool: asyncpg.Pool, external_id: str) -> int | None:
    """The store's id of a front end's user (`discord:123`), or None when they have never been seen."""
    user = await users.find_user(pool, external_id)
    return None if user is None else user.id
