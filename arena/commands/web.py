"""`arena web`: serve the public, read-only web leaderboard (settings from ARENA_WEB_* and the store's variables)."""

from __future__ import annotations

import argparse

from arena.output import DAEMON_JSON_HELP, add_json_flag


def cmd_web(args: argparse.Namespace) -> int:
    from web.__main__ import run

    return run(args.host, args.port, verbose=args.verbose, json_logs=args.json)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help="serve the public web leaderboard (settings from ARENA_WEB_* variables)")
    p.add_argument("--host", help="listen address (default ARENA_WEB_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="listen port (default ARENA_WEB_PORT or 8080)")
    add_json_flag(p, DAEMON_JSON_HELP)
    p.set_defaults(func=cmd_web)
