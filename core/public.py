"""What anyone may read without signing in: the data of the public web leaderboard.

The rules of what is public live here, not in the web front end, so that any other public view keeps them:
a ranked submission's result is public (the boards link to it), every other mode's is the submitter's own, and
no code is public until the contest rule below says so. Built on `core.browse` and `core.leaderboard`, as the
bot's and the CLI's views are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import asyncpg

from core.browse import LeaderboardPage, ProblemEntry, get_problem_entry, leaderboard_page
from core.errors import InvalidOptionError, SubmissionNotFoundError
from core.leaderboard import LANGUAGES
from core.results import load_result
from core.store import leaderboard, problems, submissions, users
from core.store.leaderboard import ANY_LANGUAGE, BoardSummary
from runner.api import SubmissionResult

# A page number past this is refused: ranks are read by a scan down the board, and no board is that long.
MAX_PAGE_NUMBER = 1000
_GPU_TYPE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


def result_is_public(sub: submissions.Submission) -> bool:
    """Whether anyone may read the submission's result: ranked ones only, which the boards show anyway. A test,
    benchmark or profile run is its submitter's own (the bot shows it to them alone)."""
    return sub.mode == "ranked"


def code_is_public(sub: submissions.Submission) -> bool:
    """Whether anyone may read the submission's source.

    The rule: a ranked submission to a problem whose contest has ended. Contests come with their own change,
    which fills this in; until then there is no ended contest, and so no public code.
    """
    return False


# -- a problem's page: its statement and one of its boards ------------------------------------------------------


@dataclass(frozen=True)
class ProblemBoard:
    """A problem, the boards it has (fullest first), and the page of the board chosen."""

    entry: ProblemEntry
    boards: list[BoardSummary]
    gpu_type: str | None
    """None when the problem has no board yet and no GPU type was asked for."""
    dtype: str
    language: str
    page: LeaderboardPage | None


def _check_filters(entry: ProblemEntry, gpu_type: str | None, dtype: str | None, language: str, page: int) -> None:
    slug = entry.stored.slug
    if gpu_type is not None and not _GPU_TYPE.fullmatch(gpu_type):
        raise InvalidOptionError(f"`{gpu_type[:64]}` is not a GPU type (lower-case letters, digits, '.', '_', '-').")
    if dtype is not None and dtype not in entry.stored.dtypes:
        raise InvalidOptionError(
            f"`{slug}` has no {dtype[:32]} boards; choose one of {', '.join(entry.stored.dtypes)}."
        )
    if language != ANY_LANGUAGE and language not in LANGUAGES:
        raise InvalidOptionError(f"`{language[:32]}` is not a language; filter by one of {', '.join(LANGUAGES)}.")
    if not 0 <= page <= MAX_PAGE_NUMBER:
        raise InvalidOptionError(f"Pages are numbered from 1 to {MAX_PAGE_NUMBER + 1}.")


async def problem_board(
    pool: asyncpg.Pool,
    slug: str,
    *,
    gpu_type: str | None = None,
    dtype: str | None = None,
    language: str = ANY_LANGUAGE,
    method: str | None = None,
    page: int = 0,
    page_size: int = 50,
) -> ProblemBoard:
    """The problem and page `page` (from 0) of one board: the one asked for, else the fullest board that fits
    what was asked (a GPU type, a dtype), else the problem's first dtype with no board yet."""
    entry = await get_problem_entry(pool, slug)
    _check_filters(entry, gpu_type, dtype, language, page)
    stored = entry.stored
    boards = await leaderboard.boards(pool, stored.problem_id, stored.version)
    fitting = [b for b in boards if gpu_type in (None, b.gpu_type) and dtype in (None, b.dtype)]
    if fitting and (gpu_type is None or dtype is None):
        gpu_type, dtype = gpu_type or fitting[0].gpu_type, dtype or fitting[0].dtype
    dtype = dtype or stored.dtypes[0]
    if gpu_type is None:
        return ProblemBoard(entry, boards, None, dtype, language, None)
    found = await leaderboard_page(
        pool, stored.slug, gpu_type, dtype, language,
        page=page, page_size=page_size, caller_external_id=None, method=method,
    )  # fmt: skip
    return ProblemBoard(entry, boards, gpu_type, dtype, language, found)


# -- one submission --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicSubmission:
    """A submission as anyone may read it: who, what, the stored result, and the code only once it is public."""

    submission: submissions.Submission
    owner_name: str
    problem_title: str
    result: SubmissionResult | None
    """None while the submission is queued or running."""
    source: str | None
    """None unless `code_is_public`."""

    @property
    def has_chart(self) -> bool:
        """Whether a roofline chart can be drawn: a passed run that timed something (the bot's rule too)."""
        return self.result is not None and self.result.status == "passed" and bool(self.result.timings)

    @property
    def chart_version(self) -> str:
        """Changes when the chart would: a rerun records a new job (for caching the chart)."""
        return f"{self.submission.id}-{self.submission.result_job_id or 0}"


async def public_submission(pool: asyncpg.Pool, submission_id: int) -> PublicSubmission:
    """The submission's public view. One that is not public reads as one that does not exist, so that ids reveal
    nothing about submissions that are private."""
    sub = await submissions.get_submission(pool, submission_id)
    if sub is None or not result_is_public(sub):
        raise SubmissionNotFoundError(
            f"There is no public submission #{submission_id}; only ranked submissions are shown here."
        )
    owner = await users.get_user(pool, sub.user_id)
    problem = await problems.get_problem_by_id(pool, sub.problem_id, sub.problem_version)
    assert owner is not None and problem is not None, "a submission's user and problem version always exist"
    result = await load_result(pool, sub) if sub.status in ("passed", "failed", "error") else None
    source = await submissions.get_source(pool, sub.source_sha256) if code_is_public(sub) else None
    return PublicSubmission(sub, owner.display_name, problem.title, result, source)
