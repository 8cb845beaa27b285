"""What anyone may read without signing in: the data of the public web leaderboard.

The rules of what is public live here, not in the web front end, so that any other public view keeps them:
a ranked submission's result is public (the boards link to it), every other mode's is the submitter's own, and
no code is public until its contest's rule says so (`core.contests.code_revealed`). A problem that a contest hides
until its start is not listed, nor shown, nor suggested. Contests and their boards are public (an invite-only
contest's boards rank its invited entrants only, as the core does), as is the rating table. Built on `core.browse`,
`core.leaderboard`, `core.contests` and `core.contests.views`, as the bot's and the CLI's views are. `now` always
comes from the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

import asyncpg

from contract.names import SUBMISSION_STATUSES
from contract.wire import SubmissionResult
from core.browse import LeaderboardPage, ProblemEntry, get_problem_entry, leaderboard_page, library_entry
from core.contests import ContestBoard, ContestView, code_revealed, contest_board, hidden_problem_ids, view
from core.contests.views import RatingCard, list_contests, user_rating_card
from core.errors import (
    ContestNotFoundError,
    InvalidOptionError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UserNotFoundError,
)
from core.leaderboard import LANGUAGES, Board
from core.problems import SLUG, find_problem, shown
from core.results import load_result
from core.store import contests, leaderboard, moderation, pages, problems, submissions, users
from core.store.contests import ContestProblem
from core.store.leaderboard import ANY_LANGUAGE, BoardKey, BoardRow, BoardSummary
from core.store.pool import Conn
from problems.registry import canonical_slug

# A page number past this is refused: ranks are read by a scan down the board, and no board is that long.
MAX_PAGE_NUMBER = 1000
_GPU_TYPE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


def result_is_public(sub: submissions.Submission) -> bool:
    """Whether anyone may read the submission's result: ranked ones only, which the boards show anyway. A test,
    benchmark or profile run is its submitter's own (the bot shows it to them alone)."""
    return sub.mode == "ranked"


async def code_is_public(conn: Conn, sub: submissions.Submission, now: datetime) -> bool:
    """Whether anyone may read the submission's source at `now`: exactly when the contest rule reveals it (a
    ranked run of a contest's phase, once every contest it belongs to has ended, unless its author opted out)."""
    return result_is_public(sub) and await code_revealed(conn, sub, now)


async def moved_to(pool: asyncpg.Pool, slug: str) -> str | None:
    """The slug a problem goes by now when `slug` is one of its former slugs (`matmul` for a problem renamed since),
    else None: the page at a former slug moves for good. A slug the store still has is nobody's former slug."""
    current = canonical_slug(slug)
    if current == slug or await problems.get_problem(pool, slug) is not None:
        return None
    return current


async def _public_entry(pool: asyncpg.Pool, slug: str, now: datetime) -> ProblemEntry:
    """The problem, unless a contest hides it at `now`; a problem of the built-in library that the store does not
    have yet reads with no boards. While any problem is hidden, a slug not found gets no suggestions, which could
    name a hidden one; a hidden problem reads as one that does not exist."""
    hidden = await hidden_problem_ids(pool, now)
    not_found = UnknownProblemError(f"There is no problem called `{shown(slug)}`; the problem list shows them all.")
    try:
        entry = await get_problem_entry(pool, slug, now=now)
    except UnknownProblemError:
        library = library_entry(slug)
        # Only a slug the store has no row for: a stored problem that a contest hides is not found, whatever the
        # library holds.
        if library is not None and await find_problem(pool, slug) is None:
            return library
        if hidden:
            raise not_found from None
        raise
    if entry.stored.problem_id in hidden:
        raise not_found
    return entry


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
    runtimes_us: dict[int, float] = field(default_factory=dict)
    """The runtime shown beside each row's score, by submission id (`core.store.pages.runtimes_us`)."""
    size: int = 0
    """How many entries the chosen board has (for a page past its end)."""


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
    now: datetime,
    gpu_type: str | None = None,
    dtype: str | None = None,
    language: str = ANY_LANGUAGE,
    method: str | None = None,
    page: int = 0,
    page_size: int = 50,
) -> ProblemBoard:
    """The problem and page `page` (from 0) of one board: the one asked for, else the fullest board that fits
    what was asked (a GPU type, a dtype), else the problem's first dtype with no board yet. A problem hidden at
    `now` is not found."""
    entry = await _public_entry(pool, slug, now)
    _check_filters(entry, gpu_type, dtype, language, page)
    stored = entry.stored
    boards = await leaderboard.boards(pool, stored.problem_id, stored.version)
    fitting = [b for b in boards if gpu_type in (None, b.gpu_type) and dtype in (None, b.dtype)]
    if fitting and (gpu_type is None or dtype is None):
        gpu_type, dtype = gpu_type or fitting[0].gpu_type, dtype or fitting[0].dtype
    dtype = dtype or stored.dtypes[0]
    if gpu_type is None or not entry.in_store:
        return ProblemBoard(entry, boards, gpu_type, dtype, language, None)
    found = await leaderboard_page(
        pool, stored.slug, gpu_type, dtype, language,
        page=page, page_size=page_size, caller_external_id=None, method=method,
    )  # fmt: skip
    board = found.board
    if board.method is None:
        return ProblemBoard(entry, boards, gpu_type, dtype, language, found)
    key = BoardKey(stored.problem_id, stored.version, gpu_type, dtype, board.method)
    async with pool.acquire() as conn:
        rows = await _tied(conn, key, language, board.rows)
        runtimes = await pages.runtimes_us(conn, [r.submission_id for r in rows])
        size = await pages.board_size(conn, key, language)
    tied = Board(board.problem, board.gpu_type, board.dtype, board.language, rows, board.method)
    found = LeaderboardPage(tied, found.page, found.page_size, found.has_next, found.caller)
    return ProblemBoard(entry, boards, gpu_type, dtype, language, found, runtimes, size)


async def _tied(conn: Conn, key: BoardKey, language: str, rows: list[BoardRow]) -> list[BoardRow]:
    """The rows with equal scores at one place: the place of the first of them (the board numbers its rows one by
    one). Only a page's first row may tie with rows of the page before: its place is counted in the store."""
    placed: list[BoardRow] = []
    for row in rows:
        if placed and placed[-1].score == row.score:
            place = placed[-1].rank
        elif not placed and row.rank > 1:
            place = await pages.score_place(conn, key, language, row.score)
        else:
            place = row.rank  # every row ahead of it scored more
        placed.append(replace(row, rank=place))
    return placed


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
    code_note: str = ""
    """Why the code is not shown, true of this run (`code_hidden_because`); empty when it is shown."""

    @property
    def has_chart(self) -> bool:
        """Whether a roofline chart can be drawn: a passed run that timed something (the bot's rule too)."""
        return self.result is not None and self.result.status == "passed" and bool(self.result.timings)

    @property
    def chart_version(self) -> str:
        """Changes when the chart would: a rerun records a new job (for caching the chart)."""
        return f"{self.submission.id}-{self.submission.result_job_id or 0}"


async def public_submission(pool: asyncpg.Pool, submission_id: int, *, now: datetime) -> PublicSubmission:
    """The submission's public view at `now`. One that is not public (or is on a problem hidden at `now`) reads as
    one that does not exist, so that ids reveal nothing about submissions that are private."""
    sub = await submissions.get_submission(pool, submission_id)
    if sub is None or not result_is_public(sub) or sub.problem_id in await hidden_problem_ids(pool, now):
        raise SubmissionNotFoundError(
            f"There is no public submission #{submission_id}; only ranked submissions are shown here."
        )
    owner = await users.get_user(pool, sub.user_id)
    problem = await problems.get_problem_by_id(pool, sub.problem_id, sub.problem_version)
    assert owner is not None and problem is not None, "a submission's user and problem version always exist"
    result = await load_result(pool, sub) if sub.status in SUBMISSION_STATUSES else None
    source = await submissions.get_source(pool, sub.source_sha256) if await code_is_public(pool, sub, now) else None
    note = "" if source is not None else await code_hidden_because(pool, sub, now)
    return PublicSubmission(sub, owner.display_name, problem.title, result, source, note)


async def code_hidden_because(conn: Conn, sub: submissions.Submission, now: datetime) -> str:
    """Why others may not read the submission's code at `now`, as the reveal rule (`code_revealed`) decides for this
    run: not a ranked run, a ranked run outside any contest, a contest that has not ended, or an author who keeps
    their contest code private. Written for a reader who is not its author."""
    if sub.mode != "ranked":
        return f"The code is not public: a {sub.mode} run's code is its author's alone, and is never revealed."
    ends = await contests.contest_ends_of_submission(conn, sub.id)
    if not ends:
        return ("The code is not public: this ranked run counted for no contest, and only code sent to a contest "
                "is ever revealed (when the contest ends).")  # fmt: skip
    last = max(ends)
    if now < last:
        return (f"The code is not public yet: it is revealed when the contest it was sent to ends, at "
                f"{last:%Y-%m-%d %H:%M} UTC, unless its author keeps it private.")  # fmt: skip
    return "The code is not public: its author keeps the code of their contest runs private."


# -- contests --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicContest:
    """A contest as anyone may read it at a moment: its state, the problems it shows, and the board asked for."""

    view: ContestView
    phase: str
    """The board asked for: `contest` or `upsolve`."""
    state: str
    """`upcoming`, `running`, `ended` (waiting for its last jobs), `frozen` or `cancelled` (`ContestView.state`)."""
    problems: list[ContestProblem]
    """The contest's problems less those it hides until its start."""
    board: ContestBoard | None
    """None before the start: nothing counts yet, and the columns would name hidden problems."""

    @property
    def contest(self) -> contests.Contest:
        return self.view.contest

    @property
    def over(self) -> bool:
        """Whether the contest has ended (its boards then link to their runs, whose code the rule reveals)."""
        return self.state in ("ended", "frozen")


async def contest_list(pool: asyncpg.Pool, now: datetime) -> list[PublicContest]:
    """Every contest, cancelled ones included, the latest start first, without boards."""
    hidden = await hidden_problem_ids(pool, now)
    return [
        PublicContest(v, "contest", v.state(now), [p for p in v.problems if p.problem_id not in hidden], None)
        for v in await list_contests(pool)
    ]


async def public_contest(pool: asyncpg.Pool, slug: str, phase: str, now: datetime) -> PublicContest:
    """The contest with its contest board (frozen once it froze) or its upsolve board (`phase`), as at `now`."""
    not_found = ContestNotFoundError(f"There is no contest called `{shown(slug)}`; the contest list shows them.")
    if not SLUG.fullmatch(slug):
        raise not_found  # no contest is named so (contest slugs are problem-like slugs): the store need not be asked
    try:
        contest_view = await view(pool, slug)
    except ContestNotFoundError:
        raise not_found from None
    state = contest_view.state(now)
    hidden = await hidden_problem_ids(pool, now)
    shown_problems = [p for p in contest_view.problems if p.problem_id not in hidden]
    board = None if state == "upcoming" else await contest_board(pool, slug, phase)
    return PublicContest(contest_view, phase, state, shown_problems, board)


@dataclass(frozen=True)
class RatingPage:
    """One page of the rating table: its rows with their places (ties share one) and how many are rated."""

    rows: list[pages.PlacedRating]
    total: int
    page: int
    page_size: int


async def rating_page(pool: asyncpg.Pool, page: int, page_size: int) -> RatingPage:
    """Page `page` (from 0) of the rating table, read a page at a time: the table has thousands of players."""
    if not 0 <= page <= MAX_PAGE_NUMBER:
        raise InvalidOptionError(f"Pages are numbered from 1 to {MAX_PAGE_NUMBER + 1}.")
    async with pool.acquire() as conn:
        total, rows = await pages.rating_page(conn, page * page_size, page_size)
    return RatingPage(rows, total, page, page_size)


RECENT_RUNS = 20


@dataclass(frozen=True)
class PlayerProfile:
    """A competitor's page: their rating and its history, their best result on each board, their latest runs."""

    user_id: int
    card: RatingCard
    best: list[pages.BestResult]
    recent: list[pages.RecentRun]
    own: bool
    """Whether the reader is the competitor: then `recent` holds their runs of every mode, not the ranked ones only."""


async def player_profile(pool: asyncpg.Pool, user_id: int, *, now: datetime, viewer_id: int | None) -> PlayerProfile:
    """The competitor's page as `viewer_id` (None: a reader who has not signed in) may read it at `now`. Others
    read the ranked runs only, whose results the boards show anyway; a problem hidden at `now` is left out."""
    own = viewer_id == user_id
    card = await public_rating(pool, user_id)
    hidden = await hidden_problem_ids(pool, now)
    async with pool.acquire() as conn:
        best = [b for b in await pages.best_results(conn, user_id) if b.problem_id not in hidden]
        recent = await pages.recent_runs(conn, user_id, RECENT_RUNS, ranked_only=not own)
    return PlayerProfile(user_id, card, best, [r for r in recent if r.problem_id not in hidden], own)


async def public_rating(pool: asyncpg.Pool, user_id: int) -> RatingCard:
    """A player's rating and its history, as the rating table links to it. A banned player is not shown, as the
    rating table leaves them out."""
    async with pool.acquire() as conn:
        user = await users.get_user(conn, user_id)
        if user is None or await moderation.active_ban(conn, user.id) is not None:
            raise UserNotFoundError(f"There is no player #{user_id} to show.")
        return await user_rating_card(conn, user)
