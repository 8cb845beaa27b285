"""`arena runner serve`: start the GPU runner daemon (configured by RUNNER_* variables, see docs/runner.md)."""

from __future__ import annotations

import argparse
import errno

from bot.core.errors import UserFacingError

_LISTEN_ADVICE = {
    errno.EADDRINUSE: "Stop whatever listens there, or choose another port with --port (or RUNNER_PORT).",
    errno.EADDRNOTAVAIL: "Choose an address of this machine with --host (or RUNNER_HOST), such as 0.0.0.0.",
    errno.EACCES: "Ports below 1024 need privileges; choose another with --port (or RUNNER_PORT).",
}


def cmd_runner_serve(args: argparse.Namespace) -> int:
    from runner.__main__ import serve
    from runner.settings import SettingsError

    try:
        return serve(args.host, args.port, args.verbose)
    except SettingsError as exc:
        raise UserFacingError(str(exc)) from exc
    except OSError as exc:
        advice = _LISTEN_ADVICE.get(exc.errno or 0)
        if advice is None or "bind" not in str(exc.strerror):
            raise
        # asyncio's message names the address it could not bind: `error while attempting to bind on …`.
        raise UserFacingError(f"The runner cannot listen: {exc.strerror}. {advice}") from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runner", help="the GPU runner daemon")
    runner_sub = p.add_subparsers(dest="runner_command", required=True)
    serve = runner_sub.add_parser("serve", help="serve the runner HTTP API (settings from RUNNER_* variables)")
    serve.add_argument("--host", help="listen address (default RUNNER_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (default RUNNER_PORT or 8700)")
    serve.set_defaults(func=cmd_runner_serve)
