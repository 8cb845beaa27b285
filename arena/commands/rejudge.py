"""`arena rejudge <slug>`: re-run a board's top entries that were timed under an older timing protocol.

The local user acts as the store's moderator, as in `arena fleet rerun-flagged`. Each entry becomes a new job on
the board's GPU pool; `arena leaderboard` marks the entries still timed under an older protocol with a dagger.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

import asyncpg

from arena.output import print_json
from arena.render import table
from arena.store_command import json_store_command
from core.errors import UserFacingError
from core.leaderboard import METHODS, list_boards
from core.moderation import Actor
from core.rejudge import rejudge_board
from core.settings import Settings
from problems.base import DTYPES
from runner.protocol import protocol_version


async def _rejudge(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    gpu = args.gpu
    if gpu is None:
        problem, boards = await list_boards(pool, args.slug, None)
        candidates = [b for b in boards if b.dtype == args.dtype and args.method in (None, b.method)]
        if not candidates:
            raise UserFacingError(f"{problem.slug} has no board in {args.dtype} to re-judge yet.")
        gpu = candidates[0].gpu_type
    actor = Actor(f"local:{settings.local_user}", settings.local_user)
    done = await rejudge_board(
        pool, actor, args.slug, gpu, args.dtype, method=args.method, top=args.top, every=args.all
    )
    if args.json:
        print_json({"protocol": protocol_version(), "gpu_type": gpu, "entries": [asdict(d) for d in done]})
        return 0
    if not done:
        print(f"The {gpu} board of {args.slug} in {args.dtype} has no entries.")
        return 0
    rows = [
        [str(d.rank), d.user, f"#{d.submission_id}", d.protocol or "-", f"job {d.job_id}" if d.job_id else d.skipped]
        for d in done
    ]
    print(table(["rank", "user", "submission", "timed under", "re-judge"], rows, align="rlrll"))
    rerun = sum(d.job_id is not None for d in done)
    print(f"{rerun} of {len(done)} re-run under {protocol_version()} on the {gpu} pool.")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rejudge", help="re-run a board's top entries timed under an older timing protocol (moderators)")
    p.add_argument("slug")
    p.add_argument("--gpu", help="GPU type (default: the fullest board for the dtype)")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("--method", choices=METHODS, help="the timing method's board (default: the fullest one)")
    p.add_argument("--top", type=int, default=10, help="how many of the top entries to look at (at most 100)")
    p.add_argument("--all", action="store_true", help="re-run them even when timed under the current protocol")
    p.add_argument("--json", action="store_true", help="print JSON (errors too)")
    p.set_defaults(func=json_store_command(_rejudge))
