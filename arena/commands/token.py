"""`arena token create|list|revoke`: personal tokens for a service account (`--user NAME`: a CI job, an agent)
or any store user (`--member discord:ID`), made by whoever runs the CLI on the service's store, with no Discord
login. The token acts as its user through the public API: its quota, its bans, its place on the boards.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

import asyncpg

from arena.output import add_json_flag, emit
from arena.render import table
from arena.store_command import store_command
from core.service_accounts import service_external_id
from core.settings import Settings
from core.store.tokens import TokenRow
from core.tokens import DEFAULT_LIFETIME, SCOPES, create_token, list_tokens, revoke_token


def _owner(args: argparse.Namespace) -> tuple[str, str]:
    """The store key and display name of the token's user."""
    if args.member is not None:
        return args.member, args.member
    return service_external_id(args.user), args.user


def _row_data(row: TokenRow) -> dict[str, object]:
    return {
        "id": row.id,
        "name": row.name,
        "prefix": row.prefix,
        "scopes": list(row.scopes),
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "revoked_at": row.revoked_at,
        "last_used_at": row.last_used_at,
    }


async def _create(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    external_id, display_name = _owner(args)
    lifetime = DEFAULT_LIFETIME if args.days is None else timedelta(days=args.days)
    made = await create_token(
        pool, external_id, display_name, args.name or "cli", scopes=args.scopes, lifetime=lifetime
    )
    if args.json:
        emit(args, {"token": made.token, "user": external_id, **_row_data(made.row)}, "")
        return 0
    # The token alone goes to stdout (`arena token create --user ci > ci.token`); what it is, to stderr.
    print(
        f"Token {made.row.id} ({made.row.name}) for {external_id}, scopes {','.join(made.row.scopes)}, valid until "
        f"{made.row.expires_at:%Y-%m-%d %H:%M} UTC. It is shown once: keep it as a secret (ARENA_TOKEN).",
        file=sys.stderr,
    )
    print(made.token)
    return 0


async def _list(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    external_id, _ = _owner(args)
    rows = await list_tokens(pool, external_id, include_gone=args.all)

    def text() -> str:
        if not rows:
            return f"{external_id} has no live tokens; make one with `arena token create`."
        body = [
            [
                str(r.id),
                r.name,
                r.prefix + "…",
                ",".join(r.scopes),
                f"{r.expires_at:%Y-%m-%d}",
                "revoked" if r.revoked_at else (f"{r.last_used_at:%Y-%m-%d %H:%M}" if r.last_used_at else "never"),
            ]
            for r in rows
        ]
        return table(["id", "name", "token", "scopes", "expires", "last used"], body, align="rlllll")

    emit(args, {"user": external_id, "tokens": [_row_data(r) for r in rows]}, text)
    return 0


async def _revoke(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    external_id, _ = _owner(args)
    row = await revoke_token(pool, external_id, args.token)
    emit(
        args,
        {"user": external_id, "revoked": True, **_row_data(row)},
        f"Token {row.id} ({row.name}) of {external_id} revoked: the API refuses it from now on.",
    )
    return 0


def _who(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="a service account by name (made on first use), e.g. ci-bot")
    who.add_argument("--member", help="a store user by external id, e.g. a Discord member's discord:<id>")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("token", help="personal API tokens for service accounts (CI, agents) without Discord")
    token = p.add_subparsers(dest="token_command", required=True)

    c = token.add_parser("create", help="make a token; printed once, alone on stdout")
    _who(c)
    c.add_argument("--scopes", default=",".join(SCOPES), help=f"comma-separated: {', '.join(SCOPES)} (default both)")
    c.add_argument("--days", type=int, help=f"lifetime in days (default {DEFAULT_LIFETIME.days}, at most 365)")
    c.add_argument("--name", help="what the token is for, shown in listings (default cli)")
    add_json_flag(c)
    c.set_defaults(func=store_command(_create))

    c = token.add_parser("list", help="the user's tokens: id, name, first characters, scopes, expiry, last use")
    _who(c)
    c.add_argument("--all", action="store_true", help="revoked and expired tokens too")
    add_json_flag(c)
    c.set_defaults(func=store_command(_list))

    c = token.add_parser("revoke", help="end one of the user's tokens at once, by id or name")
    c.add_argument("token", help="the token's id (12 or #12) or name")
    _who(c)
    add_json_flag(c)
    c.set_defaults(func=store_command(_revoke))
