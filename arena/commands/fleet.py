"""`arena fleet`: the operator's view of the fleet. Bootstrap tokens for pools, the runners that joined, and
revoking a runner's credential. Works on the store (embedded unless DATABASE_URL is set)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import asyncpg

from arena.output import print_json
from arena.render import table
from arena.store_command import json_store_command
from core import fleet
from core.errors import UserFacingError
from core.fleet import GPU_TYPE_PATTERN, FleetSettings
from core.fleet.canary import rerun_flagged
from core.moderation import Actor
from core.settings import Settings
from core.store import fleet as fleet_store


def _ago(when: datetime | None) -> str:
    if when is None:
        return "-"
    seconds = (datetime.now(UTC) - when).total_seconds()
    return f"{seconds:.0f} s ago" if seconds < 120 else f"{seconds / 60:.0f} min ago"


async def _token_create(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    import re

    if not re.match(GPU_TYPE_PATTERN, args.pool):
        raise UserFacingError(f"{args.pool!r} is not a GPU type; give a board key such as h100, h200 or cpu.")
    days = args.days if args.days is not None else FleetSettings().join_token_days
    made = await fleet.create_join_token(pool, args.pool, note=args.note or "", lifetime=timedelta(days=days))
    if args.json:
        print_json({"id": made.row.id, "pool": args.pool, "token": made.token, "expires_at": made.row.expires_at})
        return 0
    # The token alone goes to stdout, so that `arena fleet token create --pool cpu > cpu.token` makes the file a
    # runner's --token-file reads; what it is for goes to stderr.
    expires = f"{made.row.expires_at:%Y-%m-%d %H:%M} UTC" if made.row.expires_at else "never"
    print(f"Bootstrap token {made.row.id} for pool {args.pool}, valid until {expires}.", file=sys.stderr)
    print("It is shown once. Give it to the pool's runners in a file (mode 0600):", file=sys.stderr)
    print(made.token)
    return 0


async def _tokens(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    listed = await fleet_store.list_join_tokens(pool)
    if args.json:
        print_json([asdict(t) for t in listed])
        return 0
    rows = []
    for t in listed:
        state = (
            "revoked" if t.revoked_at else ("expired" if t.expires_at and t.expires_at < datetime.now(UTC) else "ok")
        )
        expires = f"{t.expires_at:%Y-%m-%d}" if t.expires_at else "never"
        rows.append([str(t.id), t.gpu_type, t.prefix + "…", state, expires, t.note])
    print(
        table(["id", "pool", "token", "state", "expires", "note"], rows, align="rlllll") if rows else "No tokens yet."
    )
    return 0


async def _token_revoke(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    if not await fleet_store.revoke_join_token(pool, args.id):
        raise UserFacingError(f"No usable token has id {args.id}; `arena fleet tokens` lists them.")
    if args.json:
        print_json({"id": args.id, "revoked": True})
        return 0
    print(f"Token {args.id} revoked: no new runner joins with it. Runners that joined keep their own credentials.")
    return 0


async def _runners(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    listed = await fleet_store.list_runners(pool, include_gone=args.all)
    if args.json:
        print_json([asdict(r) for r in listed])
        return 0
    rows = []
    for r in listed:
        hardware = r.hardware or {}
        gpus = ", ".join(sorted({g["name"] for g in hardware.get("gpus", [])})) or hardware.get("device", "-")
        flag = f"quarantined: {r.quarantine_reason}" if r.quarantined else (r.note or "")
        rows.append([r.name, str(r.id), r.gpu_type, r.state, str(r.slots), gpus, _ago(r.last_seen_at), flag])
    header = ["name", "id", "pool", "state", "slots", "hardware", "heard", "note"]
    print(table(header, rows, align="lrllrlll") if rows else "No runner has joined.")
    return 0


async def _revoke(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    row = await fleet.revoke(pool, args.name, args.reason or "revoked by an operator")
    if args.json:
        print_json(asdict(row))
        return 0
    print(f"Runner {row.name} ({row.id}) revoked: dispatchers drop it, and its credential no longer works.")
    return 0


async def _rerun_flagged(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace) -> int:
    actor = Actor(f"local:{settings.local_user}", settings.local_user)
    reruns = await rerun_flagged(pool, actor, args.runner)
    if args.json:
        print_json([asdict(r) for r in reruns])
        return 0
    if not reruns:
        print("No ranked result is flagged" + (f" on {args.runner}." if args.runner else "."))
    for rerun in reruns:
        what = f"re-run as job {rerun.job_id}" if rerun.job_id is not None else f"not re-run: {rerun.problem}"
        print(f"submission #{rerun.submission_id}: {what}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fleet", help="bootstrap tokens for GPU pools, the runners that joined, revocation")
    fleet_sub = p.add_subparsers(dest="fleet_command", required=True)
    token = fleet_sub.add_parser("token", help="make or revoke a pool's bootstrap token")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    create = token_sub.add_parser("create", help="make a bootstrap token for a pool (shown once)")
    create.add_argument("--pool", required=True, help="the pool's GPU type: h100, h200, cpu, ...")
    create.add_argument("--days", type=float, help="lifetime in days (default ARENA_FLEET_JOIN_TOKEN_DAYS or 30)")
    create.add_argument("--note", help="what the token is for")
    create.add_argument("--json", action="store_true", help="print JSON (errors too)")
    create.set_defaults(func=json_store_command(_token_create))
    revoke_token = token_sub.add_parser("revoke", help="revoke a bootstrap token")
    revoke_token.add_argument("id", type=int)
    revoke_token.add_argument("--json", action="store_true", help="print JSON (errors too)")
    revoke_token.set_defaults(func=json_store_command(_token_revoke))
    tokens = fleet_sub.add_parser("tokens", help="list the bootstrap tokens")
    tokens.add_argument("--json", action="store_true", help="print JSON (errors too)")
    tokens.set_defaults(func=json_store_command(_tokens))
    runners = fleet_sub.add_parser("runners", help="list the runners in their pools")
    runners.add_argument("--all", action="store_true", help="include runners that left or were revoked")
    runners.add_argument("--json", action="store_true", help="print JSON (errors too)")
    runners.set_defaults(func=json_store_command(_runners))
    revoke = fleet_sub.add_parser("revoke", help="revoke a runner's credential")
    revoke.add_argument("name")
    revoke.add_argument("--reason")
    revoke.add_argument("--json", action="store_true", help="print JSON (errors too)")
    revoke.set_defaults(func=json_store_command(_revoke))
    rerun = fleet_sub.add_parser(
        "rerun-flagged", help="re-run the ranked results timed on a runner whose canaries drifted (flagged)"
    )
    rerun.add_argument("--runner", help="only those timed on this runner")
    rerun.add_argument("--json", action="store_true", help="print JSON (errors too)")
    rerun.set_defaults(func=json_store_command(_rerun_flagged))
