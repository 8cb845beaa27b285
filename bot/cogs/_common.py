"""What the cogs share: autocompletion, deferring, attachments, and the moderator check."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.ui.errors import PUBLIC_PENDING
from contract.names import MODE_DESCRIPTIONS, Language

# The cogs' option types, from the one list of names (re-exported: `X as X`).
from contract.names import DType as DType
from contract.names import LanguageFilter as LanguageFilter
from core import browse
from core.contests import views as contest_views
from core.errors import BadUploadError
from core.members import actor, external_id
from core.moderation import Actor
from core.submit.uploads import check_declared

if TYPE_CHECKING:
    from bot.client import ArenaBot

# Each mode is offered with what it does: one parameter's description holds only 100 characters, too few for all.
MODE_CHOICES = [app_commands.Choice(name=f"{mode}: {text}", value=mode) for mode, text in MODE_DESCRIPTIONS.items()]
# Starter code exists for every language.
StarterLanguage = Language
READ_TIMEOUT_S = 15.0
CHOICE_LIMIT = 100


def arena(interaction: discord.Interaction) -> ArenaBot:
    return interaction.client  # type: ignore[return-value]


def utcnow() -> datetime:
    """The clock every contest decision of a command uses."""
    return datetime.now(UTC)


def member_key(user: discord.abc.User) -> str:
    return external_id(user.id)


def member_actor(user: discord.abc.User) -> Actor:
    return actor(user.id, user.display_name)


async def defer(interaction: discord.Interaction, *, public: bool) -> None:
    """Acknowledge now (the work needs the store or a runner). A public answer's errors still go private."""
    await interaction.response.defer(ephemeral=not public, thinking=True)
    if public:
        interaction.extras[PUBLIC_PENDING] = True


def mark_answered(interaction: discord.Interaction) -> None:
    """From here on the public answer stands: a later error is sent as a separate private message."""
    interaction.extras.pop(PUBLIC_PENDING, None)


async def answer(interaction: discord.Interaction, **kwargs: object) -> None:
    """Replace the deferred "thinking…" message with the answer."""
    mark_answered(interaction)
    await interaction.edit_original_response(**kwargs)  # type: ignore[arg-type]


async def read_attachment(attachment: discord.Attachment, check: bool = True) -> bytes:
    """The attachment's bytes; its declared size and extension are checked before anything is downloaded."""
    if check:
        check_declared(attachment.filename, attachment.size)
    try:
        data = await asyncio.wait_for(attachment.read(), READ_TIMEOUT_S)
    except (TimeoutError, discord.HTTPException) as exc:
        raise BadUploadError(f"`{attachment.filename}` could not be downloaded from Discord; attach it again.") from exc
    return data


def is_moderator(interaction: discord.Interaction) -> bool:
    settings = arena(interaction).settings
    user = interaction.user
    if not isinstance(user, discord.Member):
        return False
    if settings.moderator_role_id is not None and any(r.id == settings.moderator_role_id for r in user.roles):
        return True
    return bool(getattr(user.guild_permissions, settings.moderator_permission, False))


class NotModeratorError(app_commands.CheckFailure):
    def __init__(self) -> None:
        super().__init__("Only moderators can use `/mod` commands (the moderator role, or Manage Server).")


async def problem_choices(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """Problems whose slug or title contains what was typed (suggestions: the command re-validates)."""
    found = await browse.match_problems(arena(interaction).pool, current)
    return [
        app_commands.Choice(name=f"{p.slug} · {p.title}"[:CHOICE_LIMIT], value=p.slug)
        for p in found[: browse.AUTOCOMPLETE_LIMIT]
    ]


async def gpu_choices(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """GPU types with runners, and those with a board for the chosen problem."""
    bot = arena(interaction)
    types = set(bot.service.gpu_types())
    slug = getattr(interaction.namespace, "problem", None)
    if isinstance(slug, str) and slug:
        types |= set(await browse.board_gpu_types(bot.pool, slug))
    needle = current.strip().lower()
    return [app_commands.Choice(name=t, value=t) for t in sorted(types) if needle in t][: browse.AUTOCOMPLETE_LIMIT]


async def contest_choices(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    """Contests (not cancelled) whose slug or title contains what was typed."""
    found = await contest_views.match_contests(arena(interaction).pool, current)
    return [app_commands.Choice(name=f"{c.slug} · {c.title}"[:CHOICE_LIMIT], value=c.slug) for c in found]
