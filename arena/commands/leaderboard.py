"""`arena leaderboard <slug>`: the board of a problem on one GPU type and dtype, from the store."""

from __future__ import annotations

import argparse
import asyncio
import sys

import asyncpg

from arena.output import print_json
from arena.render import format_rate, table
from core.errors import USER_FACING, KernelArenaError, UnknownProblemError, UserFacingError
from core.leaderboard import (
    LANGUAGES,
    METHODS,
    OLDER_PROTOCOL_MARK,
    Board,
    get_leaderboard,
    get_rank,
    list_boards,
    older_protocol,
    older_protocol_note,
)
from core.settings import Settings
from core.store.leaderboard import BoardRow
from core.store.pool import open_store
from core.submit.distributed import board_world_size
from problems.base import DTYPES
from runner.protocol import protocol_version


def _row(r: BoardRow) -> list[str]:
    return [
        str(r.rank),
        r.display_name,
        format_rate(r.score) + (OLDER_PROTOCOL_MARK if older_protocol(r) else ""),
        r.language,
        f"#{r.submission_id}",
        r.submitted_at.strftime("%Y-%m-%d %H:%M"),
    ]


def _rows(board: Board, mine: BoardRow | None) -> list[list[str]]:
    rows = [_row(r) for r in board.rows]
    if mine is not None and all(r.user_id != mine.user_id for r in board.rows):
        rows.append(["…", "", "", "", "", ""])
        rows.append(_row(mine))
    return rows


def _entry_json(r: BoardRow) -> dict[str, object]:
    return {
        "rank": r.rank,
        "user": r.display_name,
        "user_id": r.user_id,
        "score": r.score,
        "language": r.language,
        "submission_id": r.submission_id,
        "submitted_at": r.submitted_at.isoformat(),
        "protocol": r.protocol,
        "older_protocol": older_protocol(r),
    }


def _board_json(board: Board, gpu: str, mine: BoardRow | None) -> dict[str, object]:
    return {
        "problem": board.problem.slug,
        "version": board.problem.version,
        "gpu_type": gpu,
        "world_size": board_world_size(board.problem.slug, gpu),
        "dtype": board.dtype,
        "method": board.method,
        "language": board.language,
        "unit": board.score_unit,
        "protocol": protocol_version(),
        "entries": [_entry_json(r) for r in board.rows],
        "mine": _entry_json(mine) if mine is not None else None,
    }


async def _show(settings: Settings, args: argparse.Namespace) -> int:
    async with open_store(settings.store) as store:
        problem, boards = await list_boards(store.pool, args.slug, args.version)
        gpu = args.gpu
        if gpu is None:
            candidates = [b for b in boards if b.dtype == args.dtype and args.method in (None, b.method)]
            if not candidates:
                if args.json:
                    print_json(
                        {"problem": problem.slug, "version": problem.version, "dtype": args.dtype, "entries": []}
                    )
                    return 0
                print(
                    f"No ranked submissions to {problem.slug} v{problem.version} in {args.dtype} yet. "
                    f"Rank one with `arena submit {problem.slug} FILE --mode ranked`."
                )
                return 0
            gpu = candidates[0].gpu_type
        board = await get_leaderboard(
            store.pool,
            problem.slug,
            gpu,
            args.dtype,
            language=args.lang,
            limit=args.limit,
            offset=args.offset,
            version=problem.version,
            method=args.method,
        )
        user = args.user or settings.local_user
        mine = await get_rank(
            store.pool,
            problem.slug,
            gpu,
            args.dtype,
            f"local:{user}",
            language=args.lang,
            version=problem.version,
            method=board.method or args.method,
        )
    if args.json:
        print_json(_board_json(board, gpu, mine))
        return 0
    lang = "" if board.language == "any" else f" · {board.language} only"
    # Each timing method has its own board: say which one ranked these times.
    method = f" · {board.method} timing" if board.method is not None else ""
    ranks = board_world_size(problem.slug, gpu)
    world = f" · {ranks} ranks" if ranks > 1 else ""
    print(f"{problem.title} ({problem.slug} v{problem.version}) · {gpu}{world} · {args.dtype}{method}{lang}")
    if not board.rows:
        print("No ranked submissions on this board yet.")
    else:
        headers = ["rank", "user", board.score_unit, "language", "submission", "submitted (UTC)"]
        print(table(headers, _rows(board, mine), align="rlrlrl"))
        if (note := older_protocol_note([*board.rows, *([mine] if mine else [])])) is not None:
            print(note)
    shown = (gpu, args.dtype, board.method)
    others = [
        f"{b.gpu_type}/{b.dtype}/{b.method} ({b.entries})" for b in boards if (b.gpu_type, b.dtype, b.method) != shown
    ]
    if others:
        print(f"\nOther boards: {', '.join(others)}", file=sys.stderr)
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    try:
        return _leaderboard(args)
    except UserFacingError as exc:
        if not args.json:
            raise
        print_json({"error": {"code": exc.code, "message": exc.message}})
        return 2


def _leaderboard(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_show(Settings(), args))
    except UnknownProblemError:
        from problems.registry import builtin_problems

        if args.slug in builtin_problems():
            if args.json:
                print_json({"problem": args.slug, "dtype": args.dtype, "entries": []})
                return 0
            print(f"No submissions to {args.slug} yet. Rank one with `arena submit {args.slug} FILE --mode ranked`.")
            return 0
        raise
    except USER_FACING:
        raise
    except (KernelArenaError, OSError, asyncpg.PostgresError) as exc:
        raise UserFacingError(f"The store cannot be read: {exc}") from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="show a problem's leaderboard from the submission store")
    p.add_argument("slug")
    p.add_argument("--gpu", help="GPU type (default: the fullest board for the dtype)")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("--lang", choices=LANGUAGES, help="only submissions in this language")
    p.add_argument("--method", choices=METHODS, help="the timing method's board (default: the fullest one)")
    p.add_argument("--limit", type=int, default=20, help="rows to show (at most 100)")
    p.add_argument("--offset", type=int, default=0, help="skip this many ranks")
    p.add_argument("--version", type=int, help="problem version (default: the current one)")
    p.add_argument("--user", help="also show this local user's rank (default: you)")
    p.add_argument("--json", action="store_true", help="print JSON (errors too)")
    p.set_defaults(func=cmd_leaderboard)
