"""`arena profile diff A [B]`: two profiled runs on an arena server (the one `arena login` kept, or `--server URL`)
side by side, kernel by kernel, through its public API (`GET /v1/profiles/diff`). Without B the server compares
with your fastest other profile of the problem, GPU type, dtype and case, else with a board leader's revealed one.
`--json` prints the API's `ProfileDiff`, and errors as `{"error": {...}}`."""

from __future__ import annotations

import argparse

from arena.arg_types import whole_number
from arena.commands.submissions import on_server
from arena.render import table
from arena.server_client import EXIT_CODES_HELP, ArenaServer
from contract.wire import ProfileDiff
from core.views import profile_diff as diff_view


def render_diff(diff: ProfileDiff) -> str:
    """The headline, the two runs, one table per kernel (figure, A, B, change) and the totals, each figure as
    `core.views.profile_diff` formats it (the Discord embed's too)."""
    lines = [
        f"{diff.problem} on {diff.gpu_type}: {diff_view.headline(diff)}",
        f"A: {diff_view.run_label(diff.a)}",
        f"B: {diff_view.run_label(diff.b)}; {diff_view.choice_line(diff).removeprefix('B is ')}",
        "",
    ]
    for kernel in diff.kernels:
        rows = [line.cells() for line in diff_view.kernel_lines(kernel)]
        lines += [
            diff_view.kernel_title(kernel),
            table(diff_view.HEADERS, rows),
            f"top stalls (A → B): {diff_view.stall_line(kernel)}",
            "",
        ]
    lines.append(table(("totals", *diff_view.HEADERS[1:]), [line.cells() for line in diff_view.total_lines(diff)]))
    lines += [f"note: {note}" for note in diff.notes]
    return "\n".join(lines)


def cmd_diff(args: argparse.Namespace) -> int:
    async def call(server: ArenaServer) -> int:
        found = await server.profile_diff(args.a, args.b)
        print(found.model_dump_json(indent=2) if args.json else render_diff(found))
        return 0

    return on_server(args, call)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("profile", help="your profiled runs on an arena server: compare two, kernel by kernel")
    which = p.add_subparsers(dest="profile_command", required=True)
    diff = which.add_parser(
        "diff",
        help="two profiled runs of one problem and GPU type side by side: what changed from A to B",
        epilog=EXIT_CODES_HELP,
    )
    diff.add_argument("a", type=whole_number(1), metavar="A", help="the run compared from (a submission id)")
    diff.add_argument(
        "b",
        type=whole_number(1),
        metavar="B",
        nargs="?",
        help="the run compared to (default: your fastest other profile of the same target, else a leader's)",
    )
    diff.add_argument("--server", metavar="URL", help="the server (default: the one `arena login` kept)")
    diff.add_argument("--json", action="store_true", help="print the API's JSON (errors too)")
    diff.set_defaults(func=cmd_diff)
