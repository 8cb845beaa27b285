"""`arena quota`: what a user may still submit in each mode under the store's rate limits, and when it refills.

The limits are the service's (`ARENA_RATE_*`), as the bot applies them; `arena submit` on this machine lifts them,
since whoever runs the CLI owns its store.
"""

from __future__ import annotations

import argparse
import asyncio

import asyncpg

from arena.render import table
from core.errors import USER_FACING, KernelArenaError, UserFacingError
from core.quota import describe_quota, describe_rate, user_quota
from core.settings import Settings
from core.store.pool import open_store


async def _show(settings: Settings, args: argparse.Namespace) -> int:
    external_id = args.member if args.member is not None else f"local:{args.user or settings.local_user}"
    async with open_store(settings.store) as store:
        quotas = await user_quota(store.pool, external_id, settings.rate)
    rows = [[q.mode, describe_rate(q), describe_quota(q)] for q in quotas]
    print(f"Submissions left for {external_id}")
    print(table(["mode", "limit", "now"], rows, align="lll"))
    return 0


def cmd_quota(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_show(Settings(), args))
    except USER_FACING:
        raise
    except (KernelArenaError, OSError, asyncpg.PostgresError) as exc:
        raise UserFacingError(f"The store cannot be read: {exc}") from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quota", help="what a user may still submit in each mode, and when it refills")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", help="a local user (default: you)")
    who.add_argument("--member", help="a store user by external id, e.g. a Discord member's 'discord:<id>'")
    p.set_defaults(func=cmd_quota)
