"""Contests: a set of problems, judged on chosen (GPU type, dtype) targets, between a start and an end (UTC).

The rules (docs/contests.md tells them at length):

* **What counts.** A ranked run (`mode = 'ranked'`) that passed, is not invalidated, by a user who is not banned
  (and is invited, for an invite-only contest), on a contest problem at the version the contest pinned, on one of
  the contest's targets. The contest board takes the runs CREATED in [starts_at, ends_at); the upsolve board those
  created at or after ends_at. The creation time is when the submission was accepted, so a run accepted before
  the deadline counts on the contest board even when a runner judges it after the end, and a result that arrives
  late lands on the board its submission belongs to.
* **Scoring (`rank_sum`).** The board has a column per (problem, target). In a column, each entrant's best run
  ranks 1, 2, 3, ... by score (then the earlier run, then the lower id: the problem boards' order), among the runs
  timed by the column's fullest timing method (times measured differently do not compare). An entrant's total is
  the sum of their ranks over every column; where they have no run, the column counts (entrants there + 1).
  Lower is better. Equal totals share a place (1, 2, 2, 4).
* **Freeze.** After the end the board freezes once every job of a contest-phase run has finished, or
  `FREEZE_GRACE` after the end, whichever comes first: ranked runs near the deadline are not lost to a queue, and a
  runner that is down for good does not hold the podium hostage. The frozen standings are stored and never
  recomputed, except by a moderator's amendment (`amend_frozen_board`), which writes an audit-log entry.
* **Rating.** The freeze rates the contest in the same transaction, from the frozen standings only (Glicko-2,
  core/rating.py), and marks it rated: a contest is rated once, however often freezing is retried. An amendment
  changes the standings, never the ratings already given.
* **Hidden problems.** Before the start, a contest problem that was not public when it joined the contest (not
  built into the runners, and never submitted to) is left out of the problem list.
* **Code.** Others never read a contest run's code before its contest ends; after the end they may, unless its
  author opted out (`set_code_reveal`).

Who may run these (a moderator role) is the caller's business; the core records who did what. `now` is always
passed in, so that a scheduler, a command and a test all decide on the same clock.
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from core.errors import ContestError, ContestNotFoundError, InvalidOptionError
from core.moderation import Actor
from core.problems import SLUG, require_problem, shown
from core.rating import Rating, Standing, rate_contest
from core.store import contests, moderation, users
from core.store.contests import BoardCell, Contest, ContestProblem, RatingChange, StandingRow, StoredRating, Target
from core.store.pool import Conn
from core.store.problems import ProblemVersion
from core.store.submissions import Submission
from core.submissions import DTYPES

log = logging.getLogger(__name__)

FREEZE_GRACE = timedelta(hours=1)
"""How long after the end the freeze waits for contest-phase jobs still queued or running, before it freezes
without them (a moderator may add their results later with `amend_frozen_board`)."""
PODIUM_PLACES = 3
VISIBILITIES = ("public", "invite_only")
PHASES = ("contest", "upsolve")
MAX_TITLE_CHARS = 200
_GPU_TYPE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class ContestDraft:
    """A contest as a moderator describes it. `targets` are (GPU type, dtype) pairs; times must carry a zone."""

    slug: str
    title: str
    starts_at: datetime
    ends_at: datetime
    problems: tuple[str, ...]
    targets: tuple[tuple[str, str], ...]
    visibility: str = "public"
    # Its own limit on ranked runs while it runs, (burst, per hour); None keeps the practice limit.
    ranked_limit: tuple[int, float] | None = None


@dataclass(frozen=True)
class ContestView:
    contest: Contest
    problems: list[ContestProblem]
    targets: list[Target]

    def state(self, now: datetime) -> str:
        """`cancelled`, `frozen`, `ended` (waiting for its last jobs), `running` or `upcoming`."""
        c = self.contest
        if c.cancelled_at is not None:
            return "cancelled"
        if c.frozen_at is not None:
            return "frozen"
        if now >= c.ends_at:
            return "ended"
        return "running" if now >= c.starts_at else "upcoming"


@dataclass(frozen=True)
class Column:
    """One (problem, target) column of a board; `entrants` ranked in it."""

    problem_id: int
    slug: str
    gpu_type: str
    dtype: str
    entrants: int


@dataclass(frozen=True)
class BoardLine:
    """An entrant's line: one cell per column, in the board's column order. A cell without a submission holds the
    penalty rank (entrants in that column + 1)."""

    place: int
    user_id: int
    display_name: str
    total: int
    cells: tuple[BoardCell, ...]


@dataclass(frozen=True)
class ContestBoard:
    contest: Contest
    phase: str
    frozen: bool
    columns: tuple[Column, ...]
    lines: tuple[BoardLine, ...]

    @property
    def podium(self) -> tuple[BoardLine, ...]:
        """Places 1 to 3 (more than three lines when some share a place)."""
        return tuple(line for line in self.lines if line.place <= PODIUM_PLACES)


@dataclass(frozen=True)
class Frozen:
    """A contest that froze: its final board, the jobs left out after the grace period, and the rating changes."""

    contest: Contest
    board: ContestBoard
    left_out_jobs: list[int]
    ratings: list[RatingChange]


@dataclass(frozen=True)
class Waiting:
    """A contest that ended but waits for these jobs, until `freeze_by` at the latest."""

    contest: Contest
    pending_jobs: list[int]
    freeze_by: datetime


@dataclass(frozen=True)
class FreezeReport:
    frozen: list[Frozen]
    waiting: list[Waiting]


@dataclass(frozen=True)
class PlaceMove:
    """An entrant whose place an amendment changed; None: not on that board (a run that passed or failed anew)."""

    user_id: int
    display_name: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class Amendment:
    before: ContestBoard
    after: ContestBoard

    @property
    def changed(self) -> bool:
        """Whether a place or a total changed."""
        return _places(self.before) != _places(self.after)

    @property
    def moves(self) -> tuple[PlaceMove, ...]:
        """The entrants whose place changed, in the amended board's order, then those no longer on it."""
        was = {line.user_id: line.place for line in self.before.lines}
        now = {line.user_id: line.place for line in self.after.lines}
        moved = [
            PlaceMove(line.user_id, line.display_name, was.get(line.user_id), line.place)
            for line in self.after.lines
            if was.get(line.user_id) != line.place
        ]
        gone = [
            PlaceMove(line.user_id, line.display_name, line.place, None)
            for line in self.before.lines
            if line.user_id not in now
        ]
        return tuple(moved + gone)


# -- checks -----------------------------------------------------------------------------------------------------


def _utc(when: datetime, what: str) -> datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ContestError(
            f"The {what} `{when.isoformat()}` has no time zone; give it in UTC, e.g. `2030-01-31T18:00Z`."
        )
    return when.astimezone(UTC)


def _when(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _check_title(title: str) -> str:
    if not title.strip() or len(title) > MAX_TITLE_CHARS or shown(title, MAX_TITLE_CHARS) != title:
        raise InvalidOptionError(
            f"`{shown(title)}` cannot be a contest's title: use 1 to {MAX_TITLE_CHARS} characters of text, "
            "without control characters."
        )
    return title


def _check_limit(limit: tuple[int, float] | None) -> tuple[int, float] | None:
    if limit is None:
        return None
    burst, per_hour = limit
    if burst < 1 or not per_hour > 0:
        raise InvalidOptionError(
            f"A contest's limit needs at least 1 ranked run at once and a positive rate, not {burst} and {per_hour:g}."
        )
    return burst, float(per_hour)


def _check_visibility(visibility: str) -> str:
    if visibility not in VISIBILITIES:
        raise InvalidOptionError(f"`{shown(visibility)}` is not a visibility; choose one of {', '.join(VISIBILITIES)}.")
    return visibility


def _check_window(starts_at: datetime, ends_at: datetime, now: datetime, *, start_moves: bool) -> None:
    if start_moves and starts_at < now:
        raise ContestError(f"The start {_when(starts_at)} has passed (it is {_when(now)}); choose a start from now on.")
    if ends_at <= starts_at:
        raise ContestError(f"The end {_when(ends_at)} must come after the start {_when(starts_at)}.")
    if ends_at <= now:
        raise ContestError(f"The end {_when(ends_at)} has passed (it is {_when(now)}); choose an end after now.")


def _check_targets(targets: Sequence[tuple[str, str]]) -> list[Target]:
    if not targets:
        raise ContestError("A contest needs at least one (GPU type, dtype) target whose ranked runs count.")
    checked: list[Target] = []
    for gpu_type, dtype in targets:
        if not _GPU_TYPE.fullmatch(gpu_type):
            raise InvalidOptionError(
                f"`{shown(gpu_type)}` is not a GPU type name (lower-case letters, digits, '.', '_' or '-')."
            )
        if dtype not in DTYPES:
            raise InvalidOptionError(f"`{shown(dtype)}` is not a dtype; choose one of {', '.join(DTYPES)}.")
        target = Target(gpu_type, dtype)
        if target in checked:
            raise ContestError(f"The target {gpu_type}/{dtype} is listed twice; list each target once.")
        checked.append(target)
    return checked


async def _resolve_problems(conn: Conn, slugs: Sequence[str], targets: Sequence[Target]) -> list[ProblemVersion]:
    if not slugs:
        raise ContestError("A contest needs at least one problem.")
    found: list[ProblemVersion] = []
    for slug in slugs:
        problem = await require_problem(conn, slug)
        if any(p.problem_id == problem.problem_id for p in found):
            raise ContestError(f"`{problem.slug}` is listed twice; list each problem once.")
        missing = sorted({t.dtype for t in targets} - set(problem.dtypes))
        if missing:
            raise ContestError(
                f"`{problem.slug}` does not take {', '.join(missing)}; drop that target or choose among "
                f"{', '.join(problem.dtypes)}."
            )
        found.append(problem)
    return found


async def _store_problems(conn: Conn, contest_id: int, found: Sequence[ProblemVersion]) -> None:
    rows = [(p.problem_id, p.version, await contests.problem_is_public(conn, p.problem_id)) for p in found]
    await contests.set_problems(conn, contest_id, rows)


async def _actor_id(conn: Conn, actor: Actor) -> int:
    return (await users.ensure_user(conn, actor.external_id, actor.display_name)).id


async def _locked(conn: Conn, slug: str) -> Contest:
    contest = await contests.get_contest(conn, slug, lock=True)
    if contest is None:
        raise ContestNotFoundError(f"There is no contest called `{shown(slug)}`; `/contests` lists them.")
    return contest


async def view(conn: Conn, slug: str) -> ContestView:
    """The contest with its problems and targets, or ContestNotFoundError."""
    contest = await contests.get_contest(conn, slug)
    if contest is None:
        raise ContestNotFoundError(f"There is no contest called `{shown(slug)}`; `/contests` lists them.")
    return await _view(conn, contest)


async def _view(conn: Conn, contest: Contest) -> ContestView:
    return ContestView(
        contest, await contests.problems_of(conn, contest.id), await contests.targets_of(conn, contest.id)
    )


# -- moderators: create, edit, cancel, invite -------------------------------------------------------------------


async def create_contest(pool: asyncpg.Pool, actor: Actor, draft: ContestDraft, *, now: datetime) -> ContestView:
    """Create a contest that starts at or after `now`."""
    if not SLUG.fullmatch(draft.slug):
        raise InvalidOptionError(
            f"`{shown(draft.slug)}` cannot be a contest's slug: use 1 to 64 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit (e.g. `spring-2030`)."
        )
    title = _check_title(draft.title)
    visibility = _check_visibility(draft.visibility)
    now = _utc(now, "current time")
    starts_at, ends_at = _utc(draft.starts_at, "start"), _utc(draft.ends_at, "end")
    _check_window(starts_at, ends_at, now, start_moves=True)
    targets = _check_targets(draft.targets)
    async with pool.acquire() as conn, conn.transaction():
        found = await _resolve_problems(conn, draft.problems, targets)
        actor_id = await _actor_id(conn, actor)
        contest = await contests.insert_contest(
            conn,
            slug=draft.slug,
            title=title,
            starts_at=starts_at,
            ends_at=ends_at,
            visibility=visibility,
            created_by=actor_id,
            ranked_limit=_check_limit(draft.ranked_limit),
        )
        await _store_problems(conn, contest.id, found)
        await contests.set_targets(conn, contest.id, targets)
        details = {"starts_at": starts_at.isoformat(), "ends_at": ends_at.isoformat(), "visibility": visibility}
        await moderation.audit(conn, actor_id, "contest_create", f"contest:{contest.slug}", None, details)
        created = await _view(conn, contest)
    log.info("contest %s created by %d: %s to %s", contest.slug, actor_id, _when(starts_at), _when(ends_at))
    return created


async def edit_contest(
    pool: asyncpg.Pool,
    actor: Actor,
    slug: str,
    *,
    now: datetime,
    title: str | None = None,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    visibility: str | None = None,
    problems: Sequence[str] | None = None,
    targets: Sequence[tuple[str, str]] | None = None,
    reason: str | None = None,
) -> ContestView:
    """Change a contest. Before its start anything may change; while it runs only its title and its end (never to
    a time already past); after its end nothing."""
    now = _utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await _locked(conn, slug)
        if contest.cancelled_at is not None:
            raise ContestError(f"`{contest.slug}` was cancelled; create a new contest instead.")
        if contest.frozen_at is not None or now >= contest.ends_at:
            raise ContestError(f"`{contest.slug}` ended at {_when(contest.ends_at)}; an ended contest cannot change.")
        started = now >= contest.starts_at
        fixed = {"start": starts_at, "visibility": visibility, "problems": problems, "targets": targets}
        if started and any(value is not None for value in fixed.values()):
            named = ", ".join(name for name, value in fixed.items() if value is not None)
            raise ContestError(
                f"`{contest.slug}` started at {_when(contest.starts_at)}; while it runs only its title and its end can "
                f"change, not its {named}."
            )
        new_start = _utc(starts_at, "start") if starts_at is not None else contest.starts_at
        new_end = _utc(ends_at, "end") if ends_at is not None else contest.ends_at
        _check_window(new_start, new_end, now, start_moves=starts_at is not None)
        new_targets = _check_targets(targets) if targets is not None else await contests.targets_of(conn, contest.id)
        if problems is not None or targets is not None:
            slugs = problems if problems is not None else [p.slug for p in await contests.problems_of(conn, contest.id)]
            await _store_problems(conn, contest.id, await _resolve_problems(conn, slugs, new_targets))
        if targets is not None:
            await contests.set_targets(conn, contest.id, new_targets)
        updated = await contests.update_contest(
            conn,
            contest.id,
            title=_check_title(title) if title is not None else contest.title,
            starts_at=new_start,
            ends_at=new_end,
            visibility=_check_visibility(visibility) if visibility is not None else contest.visibility,
        )
        details: dict[str, object] = {}
        if title is not None:
            details["title"] = updated.title
        if starts_at is not None:
            details["starts_at"] = new_start.isoformat()
        if ends_at is not None:
            details["ends_at"] = new_end.isoformat()
        if visibility is not None:
            details["visibility"] = updated.visibility
        if problems is not None:
            details["problems"] = list(problems)
        if targets is not None:
            details["targets"] = [f"{t.gpu_type}/{t.dtype}" for t in new_targets]
        actor_id = await _actor_id(conn, actor)
        await moderation.audit(conn, actor_id, "contest_edit", f"contest:{contest.slug}", reason, details)
        return await _view(conn, updated)


async def cancel_contest(pool: asyncpg.Pool, actor: Actor, slug: str, reason: str, *, now: datetime) -> ContestView:
    """Call a contest off: it never freezes nor rates, hides no problem, and its runs stay on the problem boards."""
    now = _utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await _locked(conn, slug)
        if contest.cancelled_at is not None:
            raise ContestError(f"`{contest.slug}` is cancelled already.")
        if contest.frozen_at is not None:
            raise ContestError(
                f"`{contest.slug}` is over and its board frozen; it cannot be cancelled. A moderator can amend the "
                "frozen board instead."
            )
        actor_id = await _actor_id(conn, actor)
        cancelled = await contests.cancel_contest(conn, contest.id, actor_id, now)
        await moderation.audit(conn, actor_id, "contest_cancel", f"contest:{contest.slug}", reason, {})
        result = await _view(conn, cancelled)
    log.info("contest %s cancelled by %d: %s", slug, actor_id, reason)
    return result


async def invite(
    pool: asyncpg.Pool, actor: Actor, slug: str, invitees: Sequence[Actor], reason: str | None = None
) -> list[int]:
    """Let these users enter an invite-only contest (recorded as users first if they never submitted). Returns
    the user ids newly invited."""
    async with pool.acquire() as conn, conn.transaction():
        contest = await _locked(conn, slug)
        if contest.visibility != "invite_only":
            raise ContestError(f"`{contest.slug}` is public: everyone may enter. Make it invite-only to invite people.")
        if contest.cancelled_at is not None or contest.frozen_at is not None:
            raise ContestError(f"`{contest.slug}` is over; invitations no longer change anything.")
        ids = [(await users.ensure_user(conn, i.external_id, i.display_name)).id for i in invitees]
        actor_id = await _actor_id(conn, actor)
        added = await contests.invite(conn, contest.id, ids, actor_id)
        details = {"user_ids": added}
        await moderation.audit(conn, actor_id, "contest_invite", f"contest:{contest.slug}", reason, details)
    return added


# -- boards -----------------------------------------------------------------------------------------------------


def _columns(problems: Sequence[ContestProblem], targets: Sequence[Target]) -> list[tuple[int, str, str, str]]:
    """(problem id, slug, GPU type, dtype) of every column: the problems in contest order, each target in turn."""
    return [(p.problem_id, p.slug, t.gpu_type, t.dtype) for p in problems for t in targets]


def rank_sum(
    columns: Sequence[tuple[int, str, str, str]], cells: Sequence[BoardCell]
) -> tuple[tuple[Column, ...], tuple[BoardLine, ...]]:
    """The `rank_sum` board from every entrant's ranked cells (see the module's docstring)."""
    by_column: dict[tuple[int, str, str], dict[int, BoardCell]] = defaultdict(dict)
    names: dict[int, str] = {}
    for cell in cells:
        by_column[(cell.problem_id, cell.gpu_type, cell.dtype)][cell.user_id] = cell
        names[cell.user_id] = cell.display_name
    cols = tuple(Column(pid, slug, gpu, dtype, len(by_column[(pid, gpu, dtype)])) for pid, slug, gpu, dtype in columns)
    unplaced: list[tuple[int, int, tuple[BoardCell, ...]]] = []
    for user_id in names:
        line: list[BoardCell] = []
        for col in cols:
            ranked = by_column[(col.problem_id, col.gpu_type, col.dtype)].get(user_id)
            if ranked is None:  # the penalty rank: one past the column's entrants
                ranked = BoardCell(
                    col.problem_id, col.gpu_type, col.dtype, user_id, names[user_id], col.entrants + 1, None, None, None
                )
            line.append(ranked)
        unplaced.append((sum(c.rank for c in line), user_id, tuple(line)))
    unplaced.sort(key=lambda u: (u[0], u[1]))
    lines: list[BoardLine] = []
    for i, (total, user_id, line_cells) in enumerate(unplaced):
        place = lines[-1].place if lines and lines[-1].total == total else i + 1
        lines.append(BoardLine(place, user_id, names[user_id], total, line_cells))
    return cols, tuple(lines)


def _window(contest: Contest, phase: str) -> tuple[datetime, datetime | None]:
    return (contest.starts_at, contest.ends_at) if phase == "contest" else (contest.ends_at, None)


async def _live_board(conn: Conn, contest_view: ContestView, phase: str) -> ContestBoard:
    contest = contest_view.contest
    since, until = _window(contest, phase)
    cells = await contests.board_cells(conn, contest.id, since, until)
    cols, lines = rank_sum(_columns(contest_view.problems, contest_view.targets), cells)
    return ContestBoard(contest, phase, False, cols, lines)


async def _frozen_board(conn: Conn, contest_view: ContestView) -> ContestBoard:
    contest = contest_view.contest
    standings = await contests.frozen_standings(conn, contest.id)
    stored = await contests.frozen_cells(conn, contest.id)
    cell_of = {(c.user_id, c.problem_id, c.gpu_type, c.dtype): c for c in stored}
    # A frozen cell without a submission is a penalty rank: only the others entered the column.
    entrants = Counter((c.problem_id, c.gpu_type, c.dtype) for c in stored if c.submission_id is not None)
    cols = tuple(
        Column(pid, slug, gpu, dtype, entrants[(pid, gpu, dtype)])
        for pid, slug, gpu, dtype in _columns(contest_view.problems, contest_view.targets)
    )
    lines = tuple(
        BoardLine(
            s.place,
            s.user_id,
            s.display_name,
            s.total,
            tuple(cell_of[(s.user_id, col.problem_id, col.gpu_type, col.dtype)] for col in cols),
        )
        for s in standings
    )
    return ContestBoard(contest, "contest", True, cols, lines)


async def contest_board(conn: Conn, slug: str, phase: str = "contest") -> ContestBoard:
    """The contest board (frozen once the contest froze, live until then) or the upsolve board (always live)."""
    if phase not in PHASES:
        raise InvalidOptionError(f"`{shown(phase)}` is not a board; choose one of {', '.join(PHASES)}.")
    contest_view = await view(conn, slug)
    if phase == "contest" and contest_view.contest.frozen_at is not None:
        return await _frozen_board(conn, contest_view)
    return await _live_board(conn, contest_view, phase)


def _places(board: ContestBoard) -> list[tuple[int, int, int]]:
    return [(line.user_id, line.place, line.total) for line in board.lines]


async def _write(conn: Conn, contest_id: int, board: ContestBoard) -> None:
    standings = [StandingRow(line.user_id, line.display_name, line.place, line.total) for line in board.lines]
    await contests.write_standings(conn, contest_id, standings, [c for line in board.lines for c in line.cells])


# -- the end: freeze, rate, amend -------------------------------------------------------------------------------


async def freeze_if_due(pool: asyncpg.Pool, now: datetime, *, grace: timedelta = FREEZE_GRACE) -> FreezeReport:
    """Freeze and rate every contest whose end has passed and whose contest-phase jobs have all finished (or whose
    grace period is over). Safe to call again and from several processes: each contest freezes once."""
    now = _utc(now, "current time")
    frozen: list[Frozen] = []
    waiting: list[Waiting] = []
    for due in await contests.due_contests(pool, now):
        outcome = await _freeze(pool, due.id, now, grace)
        if isinstance(outcome, Frozen):
            frozen.append(outcome)
        elif isinstance(outcome, Waiting):
            waiting.append(outcome)
    return FreezeReport(frozen, waiting)


async def claim_announcements(
    pool: asyncpg.Pool, report: FreezeReport, now: datetime
) -> tuple[list[Waiting], list[Frozen]]:
    """What this caller is the first to announce, each claimed in the store before it is posted (so that no notice is
    posted twice, however many bots run or restart): the contests of `report` that wait for their last runs, and
    every frozen contest whose podium is unclaimed. Those are the ones `report` froze, and any that a process froze
    and then stopped before announcing; for those, the jobs left out after the grace period are no longer known."""
    now = _utc(now, "current time")
    fresh = {frozen.contest.id: frozen for frozen in report.frozen}
    async with pool.acquire() as conn:
        waiting = [w for w in report.waiting if await contests.claim_waiting_notice(conn, w.contest.id, now)]
        frozen: list[Frozen] = []
        for contest_id in await contests.unannounced_frozen(conn):
            claimed = await contests.claim_podium(conn, contest_id, now)
            if claimed is not None:
                frozen.append(fresh.get(contest_id) or await _announced_later(conn, claimed))
    return waiting, frozen


async def _announced_later(conn: Conn, contest: Contest) -> Frozen:
    board = await _frozen_board(conn, await _view(conn, contest))
    return Frozen(contest, board, [], await contests.contest_rating_changes(conn, contest.id))


async def _freeze(pool: asyncpg.Pool, contest_id: int, now: datetime, grace: timedelta) -> Frozen | Waiting | None:
    async with pool.acquire() as conn, conn.transaction():
        # The row lock makes a second freezer wait, then see frozen_at set and do nothing.
        contest = await contests.lock_contest_by_id(conn, contest_id)
        if contest is None or contest.frozen_at is not None or contest.cancelled_at is not None:
            return None
        if now < contest.ends_at:
            return None
        pending = await contests.pending_jobs(conn, contest.id, contest.starts_at, contest.ends_at)
        freeze_by = contest.ends_at + grace
        if pending and now < freeze_by:
            return Waiting(contest, pending, freeze_by)
        board = await _live_board(conn, await _view(conn, contest), "contest")
        await _write(conn, contest.id, board)
        await contests.mark_frozen(conn, contest.id, now)
        changes = await _rate(conn, contest.id, now)
        contest = await contests.lock_contest_by_id(conn, contest.id)
        assert contest is not None
        final = await _frozen_board(conn, await _view(conn, contest))
    if pending:
        log.warning("contest %s frozen without jobs %s, still unfinished after the grace period", contest.slug, pending)
    log.info("contest %s frozen: %d entrants, %d rated", contest.slug, len(final.lines), len(changes))
    return Frozen(contest, final, pending, changes)


async def _rate(conn: Conn, contest_id: int, now: datetime) -> list[RatingChange]:
    """Rate the contest from its frozen standings, once; [] when it was rated already."""
    contest = await contests.lock_contest_by_id(conn, contest_id)
    assert contest is not None and contest.frozen_at is not None
    if contest.rated_at is not None:
        return []
    standings = await contests.frozen_standings(conn, contest_id)
    before = {
        uid: Rating(r.rating, r.rd, r.volatility)
        for uid, r in (await contests.ratings_of(conn, [s.user_id for s in standings])).items()
    }
    after = rate_contest([Standing(s.user_id, s.place) for s in standings], before)
    changes = []
    for s in standings:
        if s.user_id not in after:
            continue
        old, new = before.get(s.user_id, Rating()), after[s.user_id]
        changes.append(
            RatingChange(
                s.user_id, contest_id, s.place, old.rating, old.rd, old.volatility, new.rating, new.rd, new.volatility
            )
        )
    await contests.record_ratings(conn, contest_id, changes, now)
    return changes


async def rate_frozen_contest(pool: asyncpg.Pool, slug: str, *, now: datetime) -> list[RatingChange]:
    """Rate a frozen contest that is not rated yet (the freeze does it; this repairs one that stopped between the
    two); [] when it is rated already."""
    async with pool.acquire() as conn, conn.transaction():
        contest = await _locked(conn, slug)
        if contest.frozen_at is None:
            raise ContestError(f"`{contest.slug}` is not frozen yet; it is rated when its board freezes.")
        return await _rate(conn, contest.id, _utc(now, "current time"))


async def amend_frozen_board(pool: asyncpg.Pool, actor: Actor, slug: str, reason: str, *, now: datetime) -> Amendment:
    """Recompute a frozen board from the contest-phase runs as they stand now (after a moderator's rerun, an
    invalidation, or a result that came after the grace period) and store it, with an audit-log entry that holds
    the places before and after. Ratings already given are not changed."""
    _utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await _locked(conn, slug)
        if contest.frozen_at is None:
            raise ContestError(
                f"`{contest.slug}` is not frozen yet: its board follows every result by itself; nothing to amend."
            )
        pending = await contests.pending_jobs(conn, contest.id, contest.starts_at, contest.ends_at)
        if pending:
            jobs_named = ", ".join(f"#{j}" for j in pending)
            raise ContestError(f"Job {jobs_named} of `{contest.slug}` has not finished; amend the board once it has.")
        contest_view = await _view(conn, contest)
        before = await _frozen_board(conn, contest_view)
        live = await _live_board(conn, contest_view, "contest")
        await _write(conn, contest.id, live)
        after = await _frozen_board(conn, contest_view)
        actor_id = await _actor_id(conn, actor)
        details = {"before": _places(before), "after": _places(after)}
        await moderation.audit(conn, actor_id, "contest_amend", f"contest:{contest.slug}", reason, details)
    amendment = Amendment(before, after)
    log.info("contest %s frozen board amended by %d (changed: %s): %s", slug, actor_id, amendment.changed, reason)
    return amendment


# -- what contests hide -----------------------------------------------------------------------------------------


async def hidden_problem_ids(conn: Conn, now: datetime) -> set[int]:
    """Problems left out of the problem list at `now`: in a contest not yet started, and not public before."""
    return await contests.hidden_problem_ids(conn, _utc(now, "current time"))


async def visible_problems(conn: Conn, problems: Sequence[ProblemVersion], now: datetime) -> list[ProblemVersion]:
    """`problems` without those a contest hides at `now`."""
    hidden = await hidden_problem_ids(conn, now)
    return [p for p in problems if p.problem_id not in hidden]


async def code_revealed(conn: Conn, submission: Submission, now: datetime) -> bool:
    """Whether people other than its author (and moderators) may read the submission's code at `now`.

    Only contest code is ever revealed: a ranked run of a contest's phase, once every contest it belongs to has
    ended, unless its author opted out. Anything else stays private, as it always was."""
    ends = await contests.contest_ends_of_submission(conn, submission.id)
    if not ends or any(_utc(now, "current time") < end for end in ends):
        return False
    return await contests.reveals_code(conn, submission.user_id)


async def set_code_reveal(pool: asyncpg.Pool, who: Actor, allowed: bool) -> None:
    """Let others read (or stop them reading) the user's code of contests that have ended."""
    async with pool.acquire() as conn, conn.transaction():
        user = await users.ensure_user(conn, who.external_id, who.display_name)
        await contests.set_reveals_code(conn, user.id, allowed)


# -- ratings ----------------------------------------------------------------------------------------------------


async def user_rating(conn: Conn, external_id: str) -> tuple[StoredRating | None, list[RatingChange]]:
    """The user's current rating (None before their first rated contest) and its history, oldest first."""
    user = await users.find_user(conn, external_id)
    if user is None:
        return None, []
    current = (await contests.ratings_of(conn, [user.id])).get(user.id)
    return current, await contests.rating_history(conn, user.id)
