"""What a ranked run counts for: the contests on its problem that take it, or why each one does not.

Whether a contest takes a run is decided by the boards' own SQL (`_ENTERED` in core/store/contests.py, through
`entry_facts`), so that this answer and the boards can never disagree. Only when a contest does not take the run
is the reason looked for, in the order that tells the competitor what would have to change: the problem's version,
the target, the invitation, a ban, then the time (made before the start; made after the end, when it goes to the
upsolve board instead).

The run's creation time decides, as on the boards: a run accepted before the end counts even if it is judged
after it, and one accepted 47 s before the start counts for nothing there. Contests that were cancelled, and
contests on other problems, are not mentioned; with no contest on the problem there is nothing to say.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.contests.clock import as_utc, format_when
from core.contests.lookup import view_of
from core.store import contests, submissions
from core.store.contests import Contest, EntryFacts, Target
from core.store.pool import Conn
from core.store.submissions import Submission

log = logging.getLogger(__name__)

EntryStatus = Literal[
    "counts",  # the contest board takes it (it ranks once it has passed)
    "did_not_pass",  # the contest board would take it, but only runs that pass rank
    "upsolve",  # made after the end: it goes to the upsolve board
    "frozen_out",  # made in time, but the board froze (after its grace) before the run was judged
    "not_started",  # made before the start
    "not_invited",  # an invite-only contest that has not invited the author
    "not_target",  # its GPU type and dtype are not among the contest's targets
    "not_in_contest",  # the contest holds another version of the problem
    "banned",  # its author is banned
]
ENTRY_LIMIT = 3
"""How many contests one line names; the others are counted."""


class ContestEntry(BaseModel):
    """What one contest on the run's problem makes of the run."""

    model_config = ConfigDict(frozen=True)

    contest: str = Field(description="the contest's slug")
    title: str
    status: EntryStatus
    counts: bool = Field(description="the contest board takes the run (it ranks there once it has passed)")
    board: Literal["contest", "upsolve"] | None = Field(description="the board that takes the run, if any")
    starts_at: datetime
    ends_at: datetime
    text: str = Field(description="the clause that says it, e.g. '`sprint` starts in 47 s (...)'")


class ContestEntries(BaseModel):
    """What a ranked run counts for, contest by contest, and the one line that says it."""

    model_config = ConfigDict(frozen=True)

    submission_id: int
    counts_for: list[str] = Field(description="the slugs of the contests whose board takes the run")
    entries: list[ContestEntry]
    line: str = Field(description="one line for people: what it counts for, or why it counts for none")

    @property
    def counts_for_none(self) -> bool:
        return not self.counts_for


def describe_span(seconds: float) -> str:
    """'47 s', '12 min', '3 h 5 min', '2 d 4 h': to the unit people read at that length."""
    s = max(0, round(seconds))
    if s < 120:
        return f"{s} s"
    minutes = s // 60
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def _targets_text(targets: list[Target]) -> str:
    return ", ".join(f"{t.gpu_type}/{t.dtype}" for t in targets) or "none"


def _window(contest: Contest, created_at: datetime) -> tuple[datetime, datetime | None]:
    """The board the run's creation time falls in: the contest's [start, end), else the upsolve board [end, …).
    A run made before the start falls in neither; the contest window is asked, and refuses it."""
    if created_at >= contest.ends_at:
        return contest.ends_at, None
    return contest.starts_at, contest.ends_at


def _refusal(
    sub: Submission,
    contest: Contest,
    versions: list[int],
    targets: list[Target],
    facts: EntryFacts,
    now: datetime,
) -> tuple[EntryStatus, str]:
    """Why the boards' rule refused the run, in the order that says what would have to change."""
    slug = f"`{contest.slug}`"
    if sub.problem_version not in versions:
        held = ", ".join(f"v{v}" for v in versions)
        return "not_in_contest", (
            f"{slug} holds `{sub.slug}` at {held}, and this run was on v{sub.problem_version}: this problem "
            "(at this version) is not in the contest"
        )
    if Target(sub.gpu_type, sub.dtype) not in targets:
        return "not_target", (
            f"{slug} counts runs on {_targets_text(targets)} only, and this run is {sub.gpu_type}/{sub.dtype}"
        )
    if contest.visibility != "public" and not facts.invited:
        return "not_invited", f"{slug} is invite-only and you are not invited"
    if facts.banned:
        return "banned", f"you are banned, so {slug} counts none of your runs"
    created = sub.created_at
    if created < contest.starts_at:
        start = format_when(contest.starts_at)
        if now < contest.starts_at:
            return (
                "not_started",
                f"{slug} starts in {describe_span((contest.starts_at - now).total_seconds())} ({start})",
            )
        early = describe_span((contest.starts_at - created).total_seconds())
        return "not_started", f"this run was made {early} before {slug} started ({start})"
    # Every reason above is a condition of `_ENTERED`; reaching here means the two drifted apart (the tests compare
    # them on a table of cases). Say no more than is known rather than fail the result message.
    log.error("submission %d: the boards' rule refused it for contest %s for no reason found here", sub.id, slug)
    return "not_in_contest", f"{slug} does not take this run"


def _entry(
    sub: Submission, contest: Contest, versions: list[int], targets: list[Target], facts: EntryFacts, now: datetime
) -> ContestEntry:
    slug = f"`{contest.slug}`"
    common = {
        "contest": contest.slug,
        "title": contest.title,
        "starts_at": contest.starts_at,
        "ends_at": contest.ends_at,
    }
    upsolve = sub.created_at >= contest.ends_at
    if facts.entered and upsolve:
        text = f"{slug} ended at {format_when(contest.ends_at)}, so this run goes to its upsolve board"
        return ContestEntry(**common, status="upsolve", counts=False, board="upsolve", text=text)
    if facts.entered:
        if sub.status in ("failed", "error") or sub.invalidated:
            what = "was invalidated" if sub.invalidated else "did not"
            return ContestEntry(
                **common,
                status="did_not_pass",
                counts=False,
                board=None,
                text=f"{slug} ranks only runs that pass, and this one {what}",
            )
        frozen = contest.frozen_at
        if frozen is not None and (sub.finished_at is None or sub.finished_at > frozen):
            # The frozen board is the one stored at the freeze, never recomputed (core/contests/freezing.py).
            text = f"{slug} froze its board at {format_when(frozen)}, before this run was judged"
            return ContestEntry(**common, status="frozen_out", counts=False, board=None, text=text)
        return ContestEntry(**common, status="counts", counts=True, board="contest", text=f"counts for {slug}")
    status, text = _refusal(sub, contest, versions, targets, facts, now)
    return ContestEntry(**common, status=status, counts=False, board=None, text=text)


def entries_line(entries: list[ContestEntry]) -> str:
    """One line: the contests the run counts for, then why the others do not take it (at most ENTRY_LIMIT)."""
    counted = [e for e in entries if e.counts]
    others = [e for e in entries if not e.counts]
    if counted:
        head = "counts for contest" + ("s " if len(counted) > 1 else " ") + ", ".join(f"`{e.contest}`" for e in counted)
        shown = others[: max(0, ENTRY_LIMIT - 1)]
        clauses = [head, *(e.text for e in shown)]
    else:
        shown = others[:ENTRY_LIMIT]
        clauses = ["this run counts for no contest: " + shown[0].text, *(e.text for e in shown[1:])]
    left = len(others) - len(shown)
    if left:
        clauses.append(f"and {left} more contest{'s' if left > 1 else ''} on this problem")
    return "; ".join(clauses)


async def contest_entries(conn: Conn, sub: Submission, now: datetime) -> ContestEntries | None:
    """What the ranked run counts for at `now`; None for a run that is not ranked, or when no contest (that was not
    cancelled) holds its problem."""
    if sub.mode != "ranked":
        return None
    now = as_utc(now, "current time")
    entries: list[ContestEntry] = []
    for contest in await contests.contests_on_problem(conn, sub.problem_id):
        contest_view = await view_of(conn, contest)
        versions = [p.problem_version for p in contest_view.problems if p.problem_id == sub.problem_id]
        since, until = _window(contest, sub.created_at)
        facts = await contests.entry_facts(conn, contest.id, sub.id, since, until)
        entries.append(_entry(sub, contest, versions, contest_view.targets, facts, now))
    if not entries:
        return None
    # The ones that count first, then the nearest start: what the competitor most needs to read comes first.
    entries.sort(key=lambda e: (not e.counts, e.status == "upsolve", abs((e.starts_at - now).total_seconds())))
    return ContestEntries(
        submission_id=sub.id,
        counts_for=[e.contest for e in entries if e.counts],
        entries=entries,
        line=entries_line(entries),
    )


async def submission_entries(conn: Conn, submission_id: int, now: datetime) -> ContestEntries | None:
    """`contest_entries` of a stored submission, by id (what the public API calls); None also when there is no such
    submission."""
    sub = await submissions.get_submission(conn, submission_id)
    return None if sub is None else await contest_entries(conn, sub, now)


def receipt_line(found: ContestEntries | None) -> str | None:
    """What a receipt says of the contests: only that the run will count for none, and why (a run that counts says
    so with its result)."""
    return found.line if found is not None and found.counts_for_none else None
