"""`python -m runner serve`: the runner daemon without the rest of the `arena` CLI (a GPU host needs no bot)."""

from __future__ import annotations

import argparse
import logging
import sys

from pydantic import ValidationError

from runner.settings import RunnerSettings, SettingsError


def serve(host: str | None = None, port: int | None = None, verbose: bool = False) -> int:
    """Build the settings from RUNNER_* variables (host and port may be overridden) and serve until stopped."""
    from aiohttp import web

    from runner.server import create_app

    overrides = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        settings = RunnerSettings(**overrides)
        app = create_app(settings)
    except (SettingsError, ValidationError) as exc:
        raise SettingsError(f"The runner is misconfigured: {exc}") from exc
    # The daemon logs at INFO by default: operators need to see the sandbox level and every job.
    logging.getLogger().setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger(__name__).info("runner %s on http://%s:%d", settings.name, settings.host, settings.port)
    web.run_app(app, host=settings.host, port=settings.port, print=None, access_log=None)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner", description="the Kernel Arena GPU runner daemon")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    serve_parser = sub.add_parser("serve", help="serve the runner HTTP API (settings from RUNNER_* variables)")
    serve_parser.add_argument("--host")
    serve_parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    try:
        return serve(args.host, args.port, args.verbose)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(main())
