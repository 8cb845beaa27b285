"""`arena bot`: run the Discord bot (configuration from the environment and `.env`; see docs/bot.md)."""

from __future__ import annotations

import argparse

from arena.output import DAEMON_JSON_HELP, add_json_flag


def cmd_bot(args: argparse.Namespace) -> int:
    from bot.__main__ import run

    return run(sync_global=args.sync_global, verbose=args.verbose, json_logs=args.json)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bot", help="run the Discord bot (settings from ARENA_BOT_* and ARENA_* variables)")
    p.add_argument(
        "--sync-global",
        action="store_true",
        help="sync the slash commands globally at start (only needed without ARENA_BOT_GUILD_ID, once per change)",
    )
    add_json_flag(p, DAEMON_JSON_HELP)
    p.set_defaults(func=cmd_bot)
