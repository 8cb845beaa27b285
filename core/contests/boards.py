"""Contest boards: the `rank_sum` scoring, the live contest and upsolve boards, and the frozen board as stored."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from core.contests.lookup import ContestView, view
from core.errors import InvalidOptionError
from core.problems import shown
from core.store import contests
from core.store.contests import BoardCell, Contest, ContestProblem, StandingRow, Target
from core.store.pool import Conn

PODIUM_PLACES = 3
PHASES = ("contest", "upsolve")


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


async def live_board(conn: Conn, contest_view: ContestView, phase: str) -> ContestBoard:
    contest = contest_view.contest
    since, until = _window(contest, phase)
    cells = await contests.board_cells(conn, contest.id, since, until)
    cols, lines = rank_sum(_columns(contest_view.problems, contest_view.targets), cells)
    return ContestBoard(contest, phase, False, cols, lines)


async def frozen_board(conn: Conn, contest_view: ContestView) -> ContestBoard:
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
        return await frozen_board(conn, contest_view)
    return await live_board(conn, contest_view, phase)


def board_places(board: ContestBoard) -> list[tuple[int, int, int]]:
    return [(line.user_id, line.place, line.total) for line in board.lines]


async def write_standings(conn: Conn, contest_id: int, board: ContestBoard) -> None:
    standings = [StandingRow(line.user_id, line.display_name, line.place, line.total) for line in board.lines]
    await contests.write_standings(conn, contest_id, standings, [c for line in board.lines for c in line.cells])
