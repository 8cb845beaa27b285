"""`arena runner serve`: start the GPU runner daemon (configured by RUNNER_* variables, see docs/runner.md)."""

from __future__ import annotations

import argparse
import logging

from arena.output import DAEMON_JSON_HELP, add_json_flag
from contract.logs import configure_logging
from core.errors import UserFacingError
from runner.__main__ import add_join_arguments


def cmd_runner_serve(args: argparse.Namespace) -> int:
    from runner.__main__ import serve
    from runner.settings import SettingsError

    if args.json:
        configure_logging(json_lines=True, level=logging.WARNING)  # serve raises it to INFO (or DEBUG with -v)
    try:
        return serve(
            args.host, args.port, args.verbose, join=args.join, token_file=args.token_file, advertise=args.advertise
        )
    except SettingsError as exc:
        raise UserFacingError(str(exc)) from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runner", help="the GPU runner daemon")
    runner_sub = p.add_subparsers(dest="runner_command", required=True)
    serve = runner_sub.add_parser("serve", help="serve the runner HTTP API (settings from RUNNER_* variables)")
    serve.add_argument("--host", help="listen address (default RUNNER_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (default RUNNER_PORT or 8700)")
    add_join_arguments(serve)
    add_json_flag(serve, DAEMON_JSON_HELP)
    serve.set_defaults(func=cmd_runner_serve)
