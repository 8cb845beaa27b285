"""`arena mcp`: serve the arena's tools to an agent framework over the Model Context Protocol (stdio), speaking to
an arena server with the user's personal token (docs/agents.md).

stdout carries the protocol alone: logs go to stderr (with `--json`, one JSON object per line).
"""

from __future__ import annotations

import argparse

from arena.output import add_json_flag
from contract.logs import configure_logging
from core.errors import UserFacingError

MCP_JSON_HELP = "log one JSON object per line on stderr (stdout carries the protocol)"


def cmd_mcp(args: argparse.Namespace) -> int:
    # Imported here: the SDK is the `agents` extra's, and every other command works without it.
    try:
        from arena.mcp_server import serve
    except ImportError as exc:
        raise UserFacingError(
            f"`arena mcp` needs the package {exc.name or 'that is missing'}: install the agents extra from the "
            "project's checkout: `pip install -e '.[agents]'` (docs/agents.md)."
        ) from exc

    configure_logging(verbose=args.verbose, json_lines=args.json)
    serve(args.server)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the arena's tools to an agent over MCP (stdio): problems, show, starter, submit, result, "
        "leaderboard, profile, profile_diff",
    )
    p.add_argument(
        "--server", metavar="URL", help="the arena server (default: ARENA_SERVER, else the one `arena login` kept)"
    )
    add_json_flag(p, MCP_JSON_HELP)
    p.set_defaults(func=cmd_mcp)
