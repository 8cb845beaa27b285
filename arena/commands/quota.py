"""`arena quota`: what a user may still submit in each mode under the store's rate limits, when it refills, and
where the user's queued jobs stand (place in the fair queue, start estimate).

The limits are the service's (`ARENA_RATE_*`), as the bot applies them; `arena submit` on this machine lifts them,
since whoever runs the CLI owns its store.
"""

from __future__ import annotations

import argparse

import asyncpg

from arena.output import add_json_flag, emit
from arena.render import table
from arena.store_command import store_command
from core.quota import describe_queue, describe_quota, describe_rate, queue_lines, user_queue, user_quota
from core.settings import Settings


async def _show(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    external_id = args.member if args.member is not None else f"local:{args.user or settings.local_user}"
    quotas = await user_quota(pool, external_id, settings.rate)
    queue = await user_queue(pool, external_id)

    def text() -> str:
        rows = [[q.mode, describe_rate(q), describe_quota(q)] for q in quotas]
        lines = [f"Submissions left for {external_id}", table(["mode", "limit", "now"], rows, align="lll")]
        lines += [f"\nQueue: {describe_queue(queue)}", *(f"  {line}" for line in queue_lines(queue))]
        return "\n".join(lines)

    emit(args, {"user": external_id, "quotas": quotas, "queue": queue}, text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "quota", help="what a user may still submit in each mode, when it refills, and their queued jobs' places"
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", help="a local user (default: you)")
    who.add_argument("--member", help="a store user by external id, e.g. a Discord member's 'discord:<id>'")
    add_json_flag(p)
    p.set_defaults(func=store_command(_show))
