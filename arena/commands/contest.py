"""`arena contest …` and `arena rating`/`arena ratings`: contests and ratings from the command line, over the same
core as the bot's `/mod contest`, `/contest`, `/rating` and `/ratings` (docs/contests.md has the rules).

Whoever runs the CLI owns its store, so its moderator commands act as the local user. `arena contest freeze`
does what the bot's freezer does on a timer, for a store run without the bot. A contest's GPU types are checked
against the GPU registry, and a warning (on stderr) names those this machine's runner does not serve.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import asyncpg

from arena.output import add_json_flag, emit, jsonable
from arena.render import format_rate, table
from arena.store_command import store_command
from core.contests import (
    ContestBoard,
    ContestDraft,
    ContestView,
    GpuCatalog,
    cancel_contest,
    create_contest,
    edit_contest,
    freeze_if_due,
    invite,
    unserved_warning,
)
from core.contests.input import parse_list, parse_targets, parse_when
from core.contests.views import contest_page, list_contests, rating_card, rating_table
from core.errors import UserFacingError
from core.moderation import Actor
from core.podium_checks import podium_line
from core.problems import ProblemSpec, sync_problem
from core.settings import Settings

Command = Callable[[asyncpg.Pool, Settings, argparse.Namespace, datetime], Awaitable[int]]


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _local(settings: Settings, name: str | None = None) -> Actor:
    user = name or settings.local_user
    return Actor(f"local:{user}", user)


def _describe(contest_view: ContestView, now: datetime) -> str:
    c = contest_view.contest
    problems = ", ".join(p.slug for p in contest_view.problems)
    targets = ", ".join(f"{t.gpu_type}/{t.dtype}" for t in contest_view.targets)
    reserve = "" if c.reserve_share is None else f" · reserves {c.reserve_share:.0%} of its pools while it runs"
    return (
        f"{c.title} ({c.slug}) · {contest_view.state(now)} · {c.visibility.replace('_', '-')}\n"
        f"{_when(c.starts_at)} → {_when(c.ends_at)} · problems: {problems} · targets: {targets}{reserve}"
    )


def _view_data(contest_view: ContestView, now: datetime) -> dict[str, object]:
    """A contest as `--json` prints it: its fields, its problems and targets, and its state now."""
    return {**jsonable(contest_view), "state": contest_view.state(now)}


def render_board(board: ContestBoard) -> str:
    """The board as a table: place, user, total rank sum, then each column's rank and score."""
    if not board.lines:
        return "No entries on this board yet."
    headers = ["place", "user", "rank sum"] + [f"{c.slug} {c.gpu_type}/{c.dtype}" for c in board.columns]
    rows = []
    for line in board.lines:
        cells = [f"#{cell.rank} {format_rate(cell.score)}" if cell.score is not None else "—" for cell in line.cells]
        rows.append([str(line.place), line.display_name, str(line.total), *cells])
    return table(headers, rows, align="rlr" + "l" * len(board.columns))


async def _list(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    async with pool.acquire() as conn:
        found = await list_contests(conn)
    text = "\n".join(_describe(v, now) for v in found) or "No contests yet. Create one with `arena contest create`."
    emit(args, {"contests": [_view_data(v, now) for v in found]}, text)
    return 0


async def _show(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    async with pool.acquire() as conn:
        page = await contest_page(conn, args.slug, "upsolve" if args.upsolve else "contest")
    kind = "upsolve board" if args.upsolve else ("final board (frozen)" if page.board.frozen else "live board")
    text = (
        f"{_describe(page.view, now)}\n"
        f"{kind}: the lowest sum of per-problem ranks wins; a problem without a run counts its entrants + 1\n\n"
        f"{render_board(page.board)}"
    )
    board = {k: v for k, v in jsonable(page.board).items() if k != "contest"}  # the contest is given once
    emit(args, {"contest": _view_data(page.view, now), "board_kind": kind, "board": board}, text)
    return 0


async def _problems(pool: asyncpg.Pool, typed: str) -> tuple[str, ...]:
    """The slugs as the store knows them: a built-in problem is registered first, as the bot does at its start
    (a CLI store learns of one only when something is submitted to it), and a former slug becomes the current one."""
    from problems.registry import builtin_problems, canonical_slug

    builtins = builtin_problems()
    slugs = tuple(canonical_slug(slug) for slug in parse_list(typed, what="problem"))
    for slug in slugs:
        if slug in builtins:
            await sync_problem(pool, ProblemSpec.builtin(builtins[slug]))
    return slugs


def _gpu_catalog() -> GpuCatalog:
    """The registry's GPU types, and the one this machine's runner serves (what `arena submit` runs on here)."""
    from runner.clients.local import detect_gpu_type
    from runner.gpus import GPU_MODELS

    return GpuCatalog.of(GPU_MODELS, [detect_gpu_type("auto")])


def _warn_unserved(saved: ContestView, gpus: GpuCatalog) -> None:
    warning = unserved_warning(saved, gpus)
    if warning is not None:
        print(
            f"warning: {warning} (This command knows only this machine's runner; the bot warns again before the "
            "start if none of its runners serves it.)",
            file=sys.stderr,
        )


def _limit(args: argparse.Namespace) -> tuple[int, float] | None:
    if (args.ranked_burst is None) != (args.ranked_per_hour is None):
        raise UserFacingError("Give --ranked-burst and --ranked-per-hour together: they are one limit.")
    return None if args.ranked_burst is None else (args.ranked_burst, args.ranked_per_hour)


async def _create(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    draft = ContestDraft(
        slug=args.slug,
        title=args.title,
        starts_at=parse_when(args.start, now, what="start"),
        ends_at=parse_when(args.end, now, what="end"),
        problems=await _problems(pool, args.problems),
        targets=parse_targets(args.gpus, args.dtypes),
        visibility="invite_only" if args.invite_only else "public",
        ranked_limit=_limit(args),
        reserve_share=args.reserve_share,
    )
    gpus = _gpu_catalog()
    created = await create_contest(pool, _local(settings), draft, now=now, gpus=gpus)
    emit(args, {"created": _view_data(created, now)}, f"created\n{_describe(created, now)}")
    _warn_unserved(created, gpus)
    return 0


async def _edit(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    if (args.gpus is None) != (args.dtypes is None):
        raise UserFacingError("Give --gpus and --dtypes together: every pair of them is one target.")
    gpus = _gpu_catalog()
    edited = await edit_contest(
        pool,
        _local(settings),
        args.slug,
        now=now,
        gpus=gpus,
        title=args.title,
        starts_at=parse_when(args.start, now, what="start") if args.start else None,
        ends_at=parse_when(args.end, now, what="end") if args.end else None,
        problems=await _problems(pool, args.problems) if args.problems else None,
        targets=parse_targets(args.gpus, args.dtypes) if args.gpus else None,
        reserve_share=args.reserve_share,
        reason=args.reason,
    )
    emit(args, {"edited": _view_data(edited, now)}, f"edited\n{_describe(edited, now)}")
    _warn_unserved(edited, gpus)
    return 0


async def _cancel(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    cancelled = await cancel_contest(pool, _local(settings), args.slug, args.reason, now=now)
    emit(args, {"cancelled": _view_data(cancelled, now)}, f"cancelled\n{_describe(cancelled, now)}")
    return 0


async def _invite(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    invitees = [_local(settings, name) for name in args.users]
    added = await invite(pool, _local(settings), args.slug, invitees, args.reason)
    emit(
        args,
        {"contest": args.slug, "newly_invited": len(added), "already_invited": len(invitees) - len(added)},
        f"{len(added)} newly invited to {args.slug} ({len(invitees) - len(added)} were already)",
    )
    return 0


async def _freeze(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    report = await freeze_if_due(pool, now, podium_check=args.podium_check)
    lines: list[str] = []
    data: dict[str, list[dict[str, object]]] = {"frozen": [], "waiting": []}
    for frozen in report.frozen:
        podium = ", ".join(f"#{line.place} {line.display_name}" for line in frozen.board.podium) or "nobody"
        lines.append(f"froze {frozen.contest.slug}: podium {podium}; {len(frozen.ratings)} ratings updated")
        checked = podium_line(frozen.podium)
        if checked is not None:
            lines.append(f"  {checked}")
        data["frozen"].append(
            {
                "slug": frozen.contest.slug,
                "podium": [{"place": line.place, "user": line.display_name} for line in frozen.board.podium],
                "ratings_updated": len(frozen.ratings),
                "podium_check": checked,
            }
        )
    for waiting in report.waiting:
        what = "podium check(s)" if waiting.podium_checks else "job(s)"
        lines.append(
            f"{waiting.contest.slug} waits for {len(waiting.pending_jobs)} {what}, until {_when(waiting.freeze_by)} "
            "at the latest"
        )
        data["waiting"].append(
            {
                "slug": waiting.contest.slug,
                "pending_jobs": len(waiting.pending_jobs),
                "podium_checks": bool(waiting.podium_checks),
                "freeze_by": jsonable(waiting.freeze_by),
            }
        )
    emit(args, data, "\n".join(lines) or "No contest is due to freeze.")
    return 0


async def _rating(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    actor = _local(settings, args.user)
    async with pool.acquire() as conn:
        card = await rating_card(conn, args.member or actor.external_id, actor.display_name)
    data = {**jsonable(card), "conservative": card.conservative}
    if card.current is None or card.conservative is None:
        emit(args, data, f"{card.display_name} has no rating yet: it comes with the first contest that freezes.")
        return 0
    current = card.current
    rows = [
        [h.contest_slug, str(h.place), f"{h.rating_before:.0f}", f"{h.rating_after:.0f}", f"{h.delta:+.0f}"]
        for h in card.history
    ]
    text = (
        f"{card.display_name}: {current.rating:.0f} ± {current.rd:.0f} "
        f"(shown as {card.conservative:.0f}, rating − 2·RD) after {current.contests} contest(s)\n"
        + table(["contest", "place", "before", "after", "change"], rows, align="lrrrr")
    )
    emit(args, data, text)
    return 0


async def _ratings(pool: asyncpg.Pool, settings: Settings, args: argparse.Namespace, now: datetime) -> int:
    async with pool.acquire() as conn:
        rows = await rating_table(conn)
    data = {"ratings": [{**jsonable(r), "conservative": r.conservative} for r in rows[: args.limit]]}
    if not rows:
        emit(args, data, "No ratings yet: they come with the first contest that freezes.")
        return 0
    body = [
        [
            str(r.place),
            r.user.display_name,
            f"{r.conservative:.0f}",
            f"{r.user.rating:.0f}",
            f"{r.user.rd:.0f}",
            str(r.user.contests),
        ]
        for r in rows[: args.limit]
    ]
    emit(args, data, table(["place", "user", "shown", "rating", "RD", "contests"], body, align="rlrrrr"))
    return 0


def _run(command: Command) -> Callable[[argparse.Namespace], int]:
    """The command on the store, at the clock's time now (the core takes `now` from its callers)."""
    return store_command(lambda pool, settings, args: command(pool, settings, args, datetime.now(UTC)))


def register(sub: argparse._SubParsersAction) -> None:
    times = "UTC ISO-8601 with a zone (2030-01-31T18:00Z) or a time from now (in 10m, in 2h)"
    reserve = (
        "the fraction of its GPU types' runner slots kept for its ranked runs while it runs, e.g. 0.25: while fewer "
        "of them are in flight, its oldest queued run goes first"
    )
    p = sub.add_parser("contest", help="contests: create, edit, cancel, invite, list, show a board, freeze")
    contest = p.add_subparsers(dest="contest_command", required=True)

    c = contest.add_parser("list", help="every contest, the latest start first")
    add_json_flag(c)
    c.set_defaults(func=_run(_list))

    c = contest.add_parser("show", help="a contest and its board (the final one once frozen)")
    c.add_argument("slug")
    c.add_argument("--upsolve", action="store_true", help="the upsolve board: ranked runs after the end")
    add_json_flag(c)
    c.set_defaults(func=_run(_show))

    c = contest.add_parser("create", help="create a contest (as the local user)")
    c.add_argument("slug")
    c.add_argument("--title", required=True)
    c.add_argument("--problems", required=True, help="problem slugs, comma-separated")
    c.add_argument("--gpus", required=True, help="GPU types that count, comma-separated (e.g. h100)")
    c.add_argument("--dtypes", default="float32", help="dtypes that count, comma-separated (default float32)")
    c.add_argument("--start", required=True, help=times)
    c.add_argument("--end", required=True, help=times)
    c.add_argument("--invite-only", action="store_true", help="only invited users enter (arena contest invite)")
    c.add_argument("--ranked-burst", type=int, help="the contest's own limit on ranked runs: this many at once …")
    c.add_argument("--ranked-per-hour", type=float, help="… refilled at this many an hour (default: practice's)")
    c.add_argument("--reserve-share", type=float, help=reserve)
    add_json_flag(c)
    c.set_defaults(func=_run(_create))

    c = contest.add_parser("edit", help="change a contest: anything before its start, only title and end after")
    c.add_argument("slug")
    c.add_argument("--title")
    c.add_argument("--problems", help="problem slugs, comma-separated")
    c.add_argument("--gpus", help="GPU types, comma-separated (with --dtypes)")
    c.add_argument("--dtypes", help="dtypes, comma-separated (with --gpus)")
    c.add_argument("--start", help=times)
    c.add_argument("--end", help=times)
    c.add_argument("--reserve-share", type=float, help=f"{reserve}; 0 takes it away (may change while it runs)")
    c.add_argument("--reason", help="recorded in the audit log")
    add_json_flag(c)
    c.set_defaults(func=_run(_edit))

    c = contest.add_parser("cancel", help="cancel a contest that has not frozen")
    c.add_argument("slug")
    c.add_argument("--reason", required=True, help="recorded in the audit log")
    add_json_flag(c)
    c.set_defaults(func=_run(_cancel))

    c = contest.add_parser("invite", help="let local users enter an invite-only contest")
    c.add_argument("slug")
    c.add_argument("users", nargs="+", help="local user names")
    c.add_argument("--reason")
    add_json_flag(c)
    c.set_defaults(func=_run(_invite))

    c = contest.add_parser("freeze", help="freeze the contests that are due, rate them, and print the podiums")
    c.add_argument(
        "--podium-check",
        action="store_true",
        help="first run each podium entry a second time (queued for the bot's or the API's dispatcher; the CLI runs "
        "no queued jobs itself): run the command again once they are judged",
    )
    add_json_flag(c)
    c.set_defaults(func=_run(_freeze))

    p = sub.add_parser("rating", help="a user's contest rating (Elo-MMR) and its history")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", help="a local user (default: you)")
    who.add_argument("--member", help="a store user by external id, e.g. discord:<id>")
    add_json_flag(p)
    p.set_defaults(func=_run(_rating))

    p = sub.add_parser("ratings", help="the rating table: every rated user by rating − 2·RD")
    p.add_argument("--limit", type=int, default=50)
    add_json_flag(p)
    p.set_defaults(func=_run(_ratings))
