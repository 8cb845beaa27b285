"""`python -m bot` (or `arena bot`): run the Discord bot, configured from ARENA_BOT_* / ARENA_* variables and `.env`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from pydantic import ValidationError

from bot.bot_settings import BotSettings
from contract.logs import configure_logging
from core.errors import USER_FACING, UserFacingError

log = logging.getLogger(__name__)


def setup_logging(verbose: bool = False, json_lines: bool = False) -> None:
    """Log to stderr once for the process; discord.py's HTTP chatter stays at WARNING."""
    configure_logging(verbose=verbose, json_lines=json_lines)
    logging.getLogger("discord.http").setLevel(logging.WARNING)
    logging.getLogger("discord.gateway").setLevel(logging.WARNING)


def load_settings() -> BotSettings:
    try:
        return BotSettings()  # type: ignore[call-arg]
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise UserFacingError(
            f"The bot's configuration is incomplete ({problems}). Set ARENA_BOT_TOKEN (or DISCORD_TOKEN) and see "
            "docs/bot.md for the other variables."
        ) from exc


async def serve(settings: BotSettings, *, sync_global: bool = False) -> None:
    from bot.client import ArenaBot
    from bot.discord_base import configure_discord_base_url
    from bot.health import bot_readiness, health_listener

    configure_discord_base_url(settings.discord_api_base)
    bot = ArenaBot(settings, sync_global=sync_global)
    # The probes listen before the bot logs in (alive, not ready yet) and until it has closed.
    async with health_listener(settings.health_host, settings.health_port, bot_readiness(bot)), bot:
        await bot.start(settings.token.get_secret_value())


def run(*, sync_global: bool = False, verbose: bool = False, json_logs: bool = False) -> int:
    setup_logging(verbose, json_logs)
    settings = load_settings()
    try:
        asyncio.run(serve(settings, sync_global=sync_global))
    except KeyboardInterrupt:
        log.info("stopped")
    except Exception as exc:
        reason = startup_failure(exc, settings)
        if reason is None:
            raise
        log.debug("the bot could not start", exc_info=True)
        raise UserFacingError(reason) from exc
    return 0


def startup_failure(exc: BaseException, settings: BotSettings) -> str | None:
    """What to tell the operator when the bot stops for a reason outside it (Discord, the database), or None
    for a fault of the bot itself, which keeps its traceback."""
    import aiohttp
    import discord

    from core.errors import KernelArenaError, RunnerClientError

    where = f"the Discord API at {settings.discord_api_base}" if settings.discord_api_base else "Discord"
    check = "ARENA_DISCORD_API_BASE" if settings.discord_api_base else "this machine's network access"
    # The store (its message says which and what to check), or a runner.
    if isinstance(exc, KernelArenaError | RunnerClientError):
        return f"The bot cannot start: {exc}"
    if isinstance(exc, discord.LoginFailure):
        return f"{where} refused the bot's token ({exc}). Check ARENA_BOT_TOKEN (or DISCORD_TOKEN)."
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return f"{where} refused the bot's intents ({exc}). Enable them in the Discord developer portal."
    if isinstance(exc, discord.HTTPException):
        return f"{where} answered HTTP {exc.status} ({exc.text or exc}). Try again later, or check {check}."
    if isinstance(exc, discord.GatewayNotFound | discord.ConnectionClosed):
        return f"The bot could not keep a Gateway connection to {where} ({exc}). Try again later, or check {check}."
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"Cannot reach {where} ({exc.os_error}). Check {check}."
    if isinstance(exc, aiohttp.ClientError | OSError | TimeoutError):
        return f"Cannot reach {where} ({type(exc).__name__}: {exc}). Check {check}."
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Run the Kernel Arena Discord bot.")
    parser.add_argument("--sync-global", action="store_true", help="sync the commands globally at start")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    try:
        return run(sync_global=args.sync_global, verbose=args.verbose)
    except USER_FACING as exc:
        print(f"error: {exc.message}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(main())
