"""`arena submissions list|show|code|cancel`: your submissions on an arena server (the one `arena login` kept, or
`--server URL`), through its public API. `--json` prints the API's answer, and errors as `{"error": {...}}`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from api.submission_models import SubmissionPage
from arena.arg_types import whole_number
from arena.render import render_contests, render_result, table
from arena.server_client import EXIT_CODES_HELP, ArenaServer, load_login, report
from core.errors import UserFacingError


def on_server(args: argparse.Namespace, call: Callable[[ArenaServer], Awaitable[int]]) -> int:
    """Run `call` against the server of `--server` (or the kept login); a refusal is reported as `report` says."""

    async def run() -> int:
        async with ArenaServer(load_login(args.server)) as server:
            return await call(server)

    try:
        return asyncio.run(run())
    except UserFacingError as exc:
        return report(exc, args.json)


def _score(value: float | None, metric: str | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g} {'GB/s' if metric == 'gbps' else 'GFLOPS'}"


def render_page(page: SubmissionPage) -> str:
    rows = [
        [
            f"#{s.id}",
            s.problem,
            s.mode,
            s.dtype,
            s.gpu_type,
            s.language,
            s.status,
            _score(s.score, s.score_metric),
            s.created_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for s in page.items
    ]
    headers = ["id", "problem", "mode", "dtype", "gpu", "language", "status", "score", "submitted (UTC)"]
    text = table(headers, rows) if rows else "No submissions."
    if page.next_before is not None:
        text += f"\n(older: --before {page.next_before})"
    return text


def cmd_list(args: argparse.Namespace) -> int:
    async def call(server: ArenaServer) -> int:
        page = await server.page(args.problem, args.before, args.limit)
        print(page.model_dump_json(indent=2) if args.json else render_page(page))
        return 0

    return on_server(args, call)


def cmd_show(args: argparse.Namespace) -> int:
    async def call(server: ArenaServer) -> int:
        view = await server.submission(args.id)
        if args.json:
            print(view.model_dump_json(indent=2))
            return 0
        print(
            f"Submission #{view.id} by {view.owner}: {view.file_name} ({view.language}) for {view.problem} "
            f"[{view.dtype}, {view.mode}] on {view.gpu_type}, {view.status}",
            file=sys.stderr,
        )
        print(render_result(view.result) if view.result is not None else f"{view.status}: no result yet")
        if view.contests is not None:
            print(render_contests(view.contests))
        return 0

    return on_server(args, call)


def cmd_code(args: argparse.Namespace) -> int:
    async def call(server: ArenaServer) -> int:
        code = await server.code(args.id)
        if args.json:
            print(code.model_dump_json(indent=2))
        elif args.output:
            try:
                Path(args.output).write_text(code.source, encoding="utf-8")
            except OSError as exc:
                raise UserFacingError(f"Cannot write {args.output}: {exc.strerror or exc}.") from exc
            print(f"wrote {code.file_name} of submission #{code.id} to {args.output}", file=sys.stderr)
        else:
            sys.stdout.write(code.source)
        return 0

    return on_server(args, call)


def cmd_cancel(args: argparse.Namespace) -> int:
    async def call(server: ArenaServer) -> int:
        cancelled = await server.cancel(args.id)
        if args.json:
            print(cancelled.model_dump_json(indent=2))
        else:
            print(f"submission #{cancelled.id} was cancelled and will not run again", file=sys.stderr)
        return 0

    return on_server(args, call)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "submissions", help="your submissions on an arena server: list, show one, read its code, cancel one"
    )
    which = p.add_subparsers(dest="submissions_command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--server", metavar="URL", help="the server (default: the one `arena login` kept)")
        q.add_argument("--json", action="store_true", help="print the API's JSON (errors too)")

    listing = which.add_parser("list", help="your submissions, newest first", epilog=EXIT_CODES_HELP)
    listing.add_argument("--problem", metavar="SLUG", help="only this problem's")
    listing.add_argument("--limit", type=whole_number(1), default=20, help="how many (at most 100)")
    listing.add_argument("--before", type=whole_number(1), metavar="ID", help="older than this id (the next page)")
    common(listing)
    listing.set_defaults(func=cmd_list)
    show = which.add_parser("show", help="one submission and its result", epilog=EXIT_CODES_HELP)
    show.add_argument("id", type=whole_number(1))
    common(show)
    show.set_defaults(func=cmd_show)
    code = which.add_parser(
        "code", help="a submission's source (yours, or contest code once revealed)", epilog=EXIT_CODES_HELP
    )
    code.add_argument("id", type=whole_number(1))
    code.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")
    common(code)
    code.set_defaults(func=cmd_code)
    cancel = which.add_parser(
        "cancel", help="withdraw your submission before it finished: it will not run", epilog=EXIT_CODES_HELP
    )
    cancel.add_argument("id", type=whole_number(1))
    common(cancel)
    cancel.set_defaults(func=cmd_cancel)
