"""`arena login --server URL`: keep an arena server's address and a personal token for the commands that speak to
it (`arena submit --server`, `arena submissions`). The token comes from ARENA_TOKEN, else a prompt that does not
echo it (or one line on stdin when it is not a terminal); it is checked with the server before it is kept, in the
user's config folder with mode 0600."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys

from arena.server_client import (
    EXIT_CODES_HELP,
    TOKEN_ENV,
    ArenaServer,
    Login,
    ServerError,
    report,
    save_login,
    server_url,
)
from core.errors import UserFacingError


def read_token() -> str:
    """The token: ARENA_TOKEN, else asked for (not echoed), else one line of stdin."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        if sys.stdin.isatty():
            token = getpass.getpass("Personal token (from /token create in Discord): ").strip()
        else:
            token = sys.stdin.readline().strip()
    if not token:
        raise UserFacingError(f"No token given: paste the one /token create showed you, or set {TOKEN_ENV}.")
    return token


async def _check(login: Login) -> str:
    """Whether the server takes the token: a note for a token without the read scope, which still submits."""
    async with ArenaServer(login) as server:
        try:
            await server.page(None, None, 1)
        except ServerError as exc:
            if exc.code != "insufficient_scope":
                raise
            return " (it has no `read` scope: it can submit, not read results)"
    return ""


def cmd_login(args: argparse.Namespace) -> int:
    try:
        login = Login(server_url(args.server), read_token())
        note = asyncio.run(_check(login))
        path = save_login(login)
    except UserFacingError as exc:
        return report(exc, args.json)
    if args.json:
        print(json.dumps({"server": login.server, "config": str(path)}, indent=2))
    else:
        print(f"Logged in to {login.server}{note}; the token is kept in {path} (mode 0600).", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "login",
        help="keep an arena server and your personal token for `arena submit --server` and `arena submissions`",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("--server", required=True, metavar="URL", help="the server, e.g. https://arena.example.org")
    p.add_argument("--json", action="store_true", help="print JSON (errors too)")
    p.set_defaults(func=cmd_login)
