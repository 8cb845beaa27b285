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
* **Rating.** The freeze rates the contest in the same transaction, from the frozen standings only (Elo-MMR,
  core/rating.py), and marks it rated: a contest is rated once, however often freezing is retried. An amendment
  changes the standings, never the ratings already given.
* **Hidden problems.** Before the start, a contest problem that was not public when it joined the contest (not
  built into the runners, and never submitted to) is left out of the problem list.
* **What a run counts for.** A ranked run's result (and its receipt) says which contest on its problem counts
  it, or why none does: made before the start, not invited, not a target, another version of the problem, made
  after the end (the upsolve board takes it). The answer asks the boards' own SQL (`entry`).
* **Code.** Others never read a contest run's code before its contest ends; after the end they may, unless its
  author opted out (`set_code_reveal`).

Who may run these (a moderator role) is the caller's business; the core records who did what. `now` is always
passed in, so that a scheduler, a command and a test all decide on the same clock.

The package, one job a module: `drafts` (create, edit, cancel, invite, and their checks), `boards` (scoring and the
boards), `freezing` (the freeze, its notices, amendments), `ratings` (applying a frozen contest to the ratings),
`visibility` (hidden problems, code reveal), `targets` (known GPU types and dtypes, runners that serve them, the
warning before the start), `entry` (what a ranked run counts for), `lookup` and `clock` (finding a contest; UTC
instants), and for the front ends `input` (what a moderator types) and `views` (what a page shows). Their SQL is in
`core/store/contests.py`.
"""

from __future__ import annotations

from core.contests.boards import PHASES, PODIUM_PLACES, BoardLine, Column, ContestBoard, contest_board, rank_sum
from core.contests.drafts import (
    MAX_TITLE_CHARS,
    VISIBILITIES,
    ContestDraft,
    cancel_contest,
    create_contest,
    edit_contest,
    invite,
)
from core.contests.entry import ContestEntries, ContestEntry, contest_entries, submission_entries
from core.contests.freezing import (
    FREEZE_GRACE,
    Amendment,
    FreezeReport,
    Frozen,
    PlaceMove,
    Waiting,
    amend_frozen_board,
    claim_announcements,
    freeze_if_due,
)
from core.contests.lookup import ContestView, view
from core.contests.ratings import rate_frozen_contest, user_rating
from core.contests.targets import (
    START_WARNING_LEAD,
    GpuCatalog,
    StartWarning,
    claim_start_warnings,
    unserved_gpu_types,
    unserved_warning,
)
from core.contests.visibility import code_revealed, hidden_problem_ids, set_code_reveal, visible_problems

__all__ = [
    "FREEZE_GRACE",
    "MAX_TITLE_CHARS",
    "PHASES",
    "PODIUM_PLACES",
    "START_WARNING_LEAD",
    "VISIBILITIES",
    "Amendment",
    "BoardLine",
    "Column",
    "ContestBoard",
    "ContestDraft",
    "ContestEntries",
    "ContestEntry",
    "ContestView",
    "FreezeReport",
    "Frozen",
    "GpuCatalog",
    "PlaceMove",
    "StartWarning",
    "Waiting",
    "amend_frozen_board",
    "cancel_contest",
    "claim_announcements",
    "claim_start_warnings",
    "code_revealed",
    "contest_board",
    "contest_entries",
    "create_contest",
    "edit_contest",
    "freeze_if_due",
    "hidden_problem_ids",
    "invite",
    "rank_sum",
    "rate_frozen_contest",
    "set_code_reveal",
    "submission_entries",
    "unserved_gpu_types",
    "unserved_warning",
    "user_rating",
    "view",
    "visible_problems",
]
