"""`/token create|list|revoke`: a member's personal tokens for the public API and `arena login`.

Every answer is ephemeral: a new token is shown once, to its owner alone; the list shows names and first
characters, never a secret. A token belongs to the member's own user, so its runs draw on their quota.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import answer, defer, member_key
from bot.ui.tokens import render_new_token, render_token_list, render_token_revoked
from core.tokens import NAME_MAX, create_token, list_tokens, parse_lifetime, revoke_token

if TYPE_CHECKING:
    from bot.client import ArenaBot

SCOPE_CHOICES = [
    app_commands.Choice(name="read and submit", value="read,submit"),
    app_commands.Choice(name="read only", value="read"),
    app_commands.Choice(name="submit only", value="submit"),
]


class TokenCog(commands.Cog):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot

    token = app_commands.Group(name="token", description="Personal tokens for the API and the arena command line")

    @token.command(name="create", description="Make a personal token; it is shown once, to you alone")
    @app_commands.describe(
        name="what the token is for, such as laptop or ci",
        expires="how long it lives: 12h, 30d, 2w (default 30d, at most 365d)",
        scopes="what it may do (default: read and submit)",
    )
    @app_commands.choices(scopes=SCOPE_CHOICES)
    async def create(
        self,
        interaction: discord.Interaction,
        name: app_commands.Range[str, 1, NAME_MAX],
        expires: app_commands.Range[str, 1, 16] | None = None,
        scopes: str = "read,submit",
    ) -> None:
        await defer(interaction, public=False)
        made = await create_token(
            self.bot.pool,
            member_key(interaction.user),
            interaction.user.display_name,
            name,
            scopes=scopes,
            lifetime=parse_lifetime(expires),
        )
        await answer(interaction, embed=render_new_token(made))

    @token.command(name="list", description="Your live tokens: names, first characters, scopes, expiry, last use")
    async def list_mine(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=False)
        rows = await list_tokens(self.bot.pool, member_key(interaction.user))
        await answer(interaction, embed=render_token_list(rows))

    @token.command(name="revoke", description="End one of your tokens at once")
    @app_commands.describe(token="the token's number (#12) or name, as /token list shows")
    async def revoke(self, interaction: discord.Interaction, token: app_commands.Range[str, 1, NAME_MAX]) -> None:
        await defer(interaction, public=False)
        row = await revoke_token(self.bot.pool, member_key(interaction.user), token)
        await answer(interaction, embed=render_token_revoked(row))

    @revoke.autocomplete("token")
    async def token_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        rows = await list_tokens(self.bot.pool, member_key(interaction.user))
        typed = current.strip().lower()
        return [
            app_commands.Choice(name=f"#{r.id} {r.name} ({r.prefix}…)"[:100], value=str(r.id))
            for r in rows
            if typed in r.name.lower() or typed in str(r.id)
        ][:25]
