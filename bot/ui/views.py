"""Buttons: a paginator over any page source, and a confirm/cancel prompt.

Both answer only the member who ran the command, stop after a timeout (their buttons are then shown
disabled), and route their errors through `bot.ui.errors.send_error`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import discord

from bot.ui.embeds import render_user_error
from bot.ui.errors import send_error

log = logging.getLogger(__name__)

NOT_YOURS = "These buttons belong to whoever ran the command; run it yourself to get your own."


class ArenaView(discord.ui.View):
    """A view only its owner may use; on timeout its buttons are disabled on the message."""

    def __init__(self, owner_id: int, timeout: float) -> None:
        super().__init__(timeout=timeout)
        self.owner_id = owner_id
        self.origin: discord.Interaction | None = None
        """The interaction whose original response carries this view (edited on timeout)."""

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        await interaction.response.send_message(embed=render_user_error(NOT_YOURS), ephemeral=True)
        return False

    def disable(self) -> None:
        for item in self.children:
            if isinstance(item, discord.ui.Button | discord.ui.Select):
                item.disabled = True

    async def on_timeout(self) -> None:
        self.disable()
        # The timer outlives a bot that closed first (discord.py leaves it running): nothing is left to edit with.
        if self.origin is not None and not self.origin.client.is_closed():
            with contextlib.suppress(discord.HTTPException):
                await self.origin.edit_original_response(view=self)

    async def on_error(self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]) -> None:
        await send_error(interaction, error)


@dataclass(frozen=True)
class Page:
    """One page: its embed, its number (from 0), whether another follows, and the page holding the caller."""

    embed: discord.Embed
    index: int
    has_next: bool
    caller_index: int | None = None


class PageSource(Protocol):
    async def get_page(self, index: int) -> Page: ...


class Paginator(ArenaView):
    """First / previous / next / "my rank" buttons over a PageSource."""

    def __init__(self, source: PageSource, owner_id: int, timeout: float) -> None:
        super().__init__(owner_id, timeout)
        self.source = source
        self.page: Page | None = None

    async def start(self, interaction: discord.Interaction, first: Page) -> None:
        """Show `first` as the (deferred) original response of `interaction`, with the buttons."""
        self.origin = interaction
        self._show(first)
        if first.index == 0 and not first.has_next:
            await interaction.edit_original_response(embed=first.embed)
            self.stop()
            return
        await interaction.edit_original_response(embed=first.embed, view=self)

    def _show(self, page: Page) -> None:
        self.page = page
        self.first.disabled = self.previous.disabled = page.index == 0
        self.next.disabled = not page.has_next
        self.mine.disabled = page.caller_index is None or page.caller_index == page.index

    async def _go(self, interaction: discord.Interaction, index: int) -> None:
        page = await self.source.get_page(max(index, 0))
        self._show(page)
        await interaction.response.edit_message(embed=page.embed, view=self)

    @discord.ui.button(emoji="⏮️", style=discord.ButtonStyle.secondary, custom_id="page:first")
    async def first(self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]) -> None:
        await self._go(interaction, 0)

    @discord.ui.button(emoji="◀️", style=discord.ButtonStyle.secondary, custom_id="page:prev")
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]) -> None:
        await self._go(interaction, (self.page.index if self.page else 1) - 1)

    @discord.ui.button(emoji="▶️", style=discord.ButtonStyle.secondary, custom_id="page:next")
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]) -> None:
        await self._go(interaction, (self.page.index if self.page else -1) + 1)

    @discord.ui.button(label="My rank", emoji="📍", style=discord.ButtonStyle.primary, custom_id="page:mine")
    async def mine(self, interaction: discord.Interaction, button: discord.ui.Button[Paginator]) -> None:
        target = self.page.caller_index if self.page and self.page.caller_index is not None else 0
        await self._go(interaction, target)


Confirm = Callable[[discord.Interaction], Awaitable[discord.Embed]]


class ConfirmView(ArenaView):
    """Confirm or cancel an action; `on_confirm` does it and returns the embed that replaces the prompt."""

    def __init__(self, owner_id: int, timeout: float, on_confirm: Confirm, *, confirm_label: str = "Confirm") -> None:
        super().__init__(owner_id, timeout)
        self._on_confirm = on_confirm
        self.confirm.label = confirm_label

    @discord.ui.button(label="Confirm", style=discord.ButtonStyle.success, custom_id="confirm:yes")
    async def confirm(self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmView]) -> None:
        self.disable()
        await interaction.response.edit_message(view=self)
        self.stop()
        embed = await self._on_confirm(interaction)
        await interaction.edit_original_response(embed=embed, view=None)

    @discord.ui.button(label="Cancel", style=discord.ButtonStyle.secondary, custom_id="confirm:no")
    async def cancel(self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmView]) -> None:
        self.stop()
        embed = discord.Embed(description="Cancelled; nothing was changed.", colour=discord.Colour.light_grey())
        await interaction.response.edit_message(embed=embed, view=None)
