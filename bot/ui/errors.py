"""How a failed interaction is answered: a red ephemeral embed that says what to do, or an apology with an id.

`send_error` is the one place that maps exceptions to replies. The command tree's `on_error` and every view's
`on_error` call it. User-facing errors (`UserFacingError`, failed checks, bad option values, cooldowns) are
shown as they are. Anything else is logged once, with its traceback and an incident id, and the user sees
only the id.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid

import asyncpg
import discord
from discord import app_commands

from bot.ui.embeds import render_internal_error, render_user_error
from core.errors import USER_FACING, RateLimitedError, StoreUnavailableError
from core.ratelimit import describe_wait

log = logging.getLogger(__name__)

PUBLIC_PENDING = "arena_public_pending"
"""`interaction.extras` key: the command deferred publicly and has not answered yet, so an error replaces
the public "thinking…" placeholder with a private message instead of showing it to everyone."""


def unwrap(error: BaseException) -> BaseException:
    """The exception behind discord.py's wrappers (CommandInvokeError and friends)."""
    while isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    return error


STORE_OUTAGE = "The arena's database is not answering right now; nothing was recorded. Try again shortly."
# What reaching a database that is down or restarting raises: a refused or dropped connection, a server that is
# starting up or shutting down. None of it is a fault a moderator can fix.
_OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    StoreUnavailableError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.ConnectionDoesNotExistError,
    ConnectionError,
)


def is_store_outage(error: BaseException) -> bool:
    """Whether `error`, or an error it was raised from, is the database being away."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, _OUTAGE_ERRORS):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def new_incident_id() -> str:
    return uuid.uuid4().hex[:10]


def error_embed(interaction: discord.Interaction, error: BaseException) -> discord.Embed:
    """The reply for `error` (already unwrapped); unexpected errors are logged here, with an incident id."""
    if isinstance(error, RateLimitedError):
        embed = render_user_error(error.message)
        embed.add_field(name="Next submission", value=f"<t:{int(time.time() + error.retry_after_s) + 1}:R>")
        return embed
    if isinstance(error, USER_FACING):
        return render_user_error(error.message)
    if isinstance(error, app_commands.CommandOnCooldown):
        return render_user_error(f"Slow down: try again in {describe_wait(error.retry_after)}.")
    if isinstance(error, app_commands.TransformerError):
        return render_user_error(f"`{error.value}` is not a valid value here; pick one of the suggestions.")
    if isinstance(error, app_commands.CheckFailure):
        return render_user_error(str(error) or "You cannot use this command here.")
    data: dict[str, object] = dict(interaction.data or {})
    what = f"/{interaction.command.qualified_name}" if interaction.command else f"component {data.get('custom_id')}"
    if is_store_outage(error):
        log.warning("%s by user %s: the database is away (%s)", what, interaction.user.id, error)
        return render_user_error(STORE_OUTAGE)
    incident = new_incident_id()
    log.error(
        "incident %s: %s by user %s in channel %s failed",
        incident,
        what,
        interaction.user.id,
        interaction.channel_id,
        exc_info=error,
    )
    return render_internal_error(incident)


async def send_error(interaction: discord.Interaction, error: BaseException) -> None:
    """Answer `interaction` privately with the reply for `error`."""
    error = unwrap(error)
    if isinstance(error, discord.NotFound) and error.code == 10062:
        log.warning("interaction %s expired before it was answered", interaction.id)
        return
    embed = error_embed(interaction, error)
    try:
        if not interaction.response.is_done():
            await interaction.response.send_message(embed=embed, ephemeral=True)
            return
        if interaction.extras.pop(PUBLIC_PENDING, False):
            with contextlib.suppress(discord.HTTPException):
                await interaction.delete_original_response()
        await interaction.followup.send(embed=embed, ephemeral=True)
    except discord.HTTPException:
        log.warning("could not tell user %s about an error", interaction.user.id, exc_info=True)
