"""Embeds of `/token`: a new token (shown once), the caller's tokens (never their secrets), a revocation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import discord

from bot.ui.embeds import COLOUR_INFO, DESCRIPTION_LIMIT, TITLE_LIMIT, clip, escape_code, fit
from core.store.tokens import TokenRow
from core.tokens import NewToken


def _when(moment: datetime) -> str:
    """The reader's local date and time, and how far from now (Discord renders the stamp)."""
    unix = int(moment.timestamp())
    return f"<t:{unix}:f> (<t:{unix}:R>)"


def _name(name: str) -> str:
    """A token's name inside inline code: no backtick to end it early, mentions defused."""
    return escape_code(name.replace("`", "'"))


def _line(row: TokenRow) -> str:
    used = _when(row.last_used_at) if row.last_used_at is not None else "never"
    return (
        f"**#{row.id}** `{_name(row.name)}` · `{row.prefix}…` · {', '.join(row.scopes)}\n"
        f"expires {_when(row.expires_at)} · last used {used}"
    )


def render_new_token(made: NewToken) -> discord.Embed:
    """The token, once: only its hash is kept, so this message is the only place it is ever shown."""
    row = made.row
    description = (
        f"```\n{made.token}\n```\n"
        "Copy it now: it is shown **once** and cannot be shown again. Keep it like a password.\n\n"
        f"Scopes: {', '.join(row.scopes)} · expires {_when(row.expires_at)}\n"
        "Use it with `arena login --server URL` (or the `ARENA_TOKEN` variable), or send it to the API as "
        "`Authorization: Bearer …`. `/token revoke` ends it at once."
    )
    embed = discord.Embed(
        title=clip(f"🔑 Token #{row.id} `{_name(row.name)}` created", TITLE_LIMIT),
        description=clip(description, DESCRIPTION_LIMIT),
        colour=COLOUR_INFO,
    )
    return fit(embed)


def render_token_list(rows: Sequence[TokenRow]) -> discord.Embed:
    """The caller's live tokens: id, name, first characters, scopes, expiry, last use; never the secret."""
    if rows:
        body = "\n".join(_line(r) for r in rows)
        footer = "Tokens are shown by their first characters only. `/token revoke` ends one."
    else:
        body = "You have no live token. `/token create` makes one for the API and the command line."
        footer = "Tokens expire after 30 days unless you choose otherwise."
    embed = discord.Embed(title="🔑 Your tokens", description=clip(body, DESCRIPTION_LIMIT), colour=COLOUR_INFO)
    embed.set_footer(text=footer)
    return fit(embed)


def render_token_revoked(row: TokenRow) -> discord.Embed:
    embed = discord.Embed(
        title=clip(f"🔑 Token #{row.id} `{_name(row.name)}` revoked", TITLE_LIMIT),
        description=f"`{row.prefix}…` is refused from now on, everywhere.",
        colour=COLOUR_INFO,
    )
    return fit(embed)
