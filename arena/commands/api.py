"""`arena api`: the core's HTTP API service; runners join their pools here, and it dispatches jobs to them."""

from __future__ import annotations

import argparse

from arena.output import DAEMON_JSON_HELP, add_json_flag


def cmd_api(args: argparse.Namespace) -> int:
    from api.__main__ import run

    dispatch = False if args.no_dispatch else None
    return run(args.host, args.port, dispatch=dispatch, verbose=args.verbose, json_logs=args.json)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "api", help="serve the core's HTTP API: runners join and send heartbeats here (ARENA_API_* variables)"
    )
    p.add_argument("--host", help="listen address (default ARENA_API_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="listen port (default ARENA_API_PORT or 8800)")
    p.add_argument("--no-dispatch", action="store_true", help="serve the API only; another process dispatches the jobs")
    add_json_flag(p, DAEMON_JSON_HELP)
    p.set_defaults(func=cmd_api)
