"""`python -m web` (or `arena web`): serve the public web leaderboard, configured from ARENA_WEB_* and ARENA_*."""

from __future__ import annotations

import logging
import sys

from aiohttp.web import run_app
from pydantic import ValidationError

from contract.logs import configure_logging
from core.errors import UserFacingError
from web.app import create_app
from web.settings import WebSettings

log = logging.getLogger(__name__)


def setup_logging(verbose: bool = False, json_lines: bool = False) -> None:
    """Log to stderr once for the process; one line per request from aiohttp's access log."""
    configure_logging(verbose=verbose, json_lines=json_lines)


def load_settings(host: str | None = None, port: int | None = None) -> WebSettings:
    """The settings from the environment, with the command line's host and port over them."""
    overrides = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    try:
        return WebSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise UserFacingError(
            f"The web server's configuration is wrong ({problems}); see docs/configuration.md."
        ) from exc


def run(host: str | None = None, port: int | None = None, *, verbose: bool = False, json_logs: bool = False) -> int:
    setup_logging(verbose, json_logs)
    settings = load_settings(host, port)
    log.info("serving the web leaderboard on http://%s:%d", settings.host, settings.port)
    try:
        run_app(create_app(settings), host=settings.host, port=settings.port, print=None)
    except OSError as exc:
        raise UserFacingError(
            f"Cannot listen on {settings.host}:{settings.port} ({exc.strerror or exc}); "
            "choose another with --port or ARENA_WEB_PORT."
        ) from exc
    return 0


if __name__ == "__main__":
    sys.exit(run())
