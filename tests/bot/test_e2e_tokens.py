"""`/token create|list|revoke` through the fake Discord and the real bot: every answer is ephemeral, the token is
shown once and works for its owner's user in the store, the list never shows it, and a revoked token is refused."""

from __future__ import annotations

import re

import pytest

from core.members import external_id
from core.tokens import TokenRevokedError, verify_token
from tests.bot.harness import Arena
from tests.fakediscord import FakeUser, InteractionRecord, RecordedMessage

TOKEN = re.compile(r"arena_pat_[A-Za-z0-9_-]{43}")


async def shown(arena: Arena, interaction: InteractionRecord) -> RecordedMessage:
    return await arena.fake.wait_for_original(interaction, lambda m: bool(m.embeds))


def text_of(message: RecordedMessage) -> str:
    embed = message.embeds[0]
    return "\n".join([embed.get("title", ""), embed.get("description", ""), str(embed.get("fields", ""))])


async def token_command(arena: Arena, user: FakeUser, command: str, options: dict | None = None) -> RecordedMessage:
    message = await shown(arena, await arena.fake.invoke_slash(user, f"token {command}", options or {}))
    assert message.ephemeral, f"/token {command} answered in public"
    return message


async def test_a_token_is_shown_once_listed_without_its_secret_and_revoked(arena: Arena) -> None:
    fake = arena.fake
    tess, other = fake.add_member("tess"), fake.add_member("otto")

    created = await token_command(arena, tess, "create", {"name": "laptop", "expires": "7d", "scopes": "read"})
    found = TOKEN.findall(text_of(created))
    assert len(found) == 1 and "shown **once**" in text_of(created)
    token = found[0]
    # The token is the member's own: the same user row as their Discord runs.
    verified = await verify_token(arena.bot.pool, token)
    assert verified.external_id == external_id(int(tess.id)) and verified.scopes == ("read",)

    listed = text_of(await token_command(arena, tess, "list"))
    assert "`laptop`" in listed and token[:16] in listed and token not in listed
    assert TOKEN.search(listed) is None
    # Nobody else sees it, nor may revoke it.
    assert "You have no live token" in text_of(await token_command(arena, other, "list"))
    refused = await fake.invoke_slash(other, "token revoke", {"token": "laptop"})
    assert "no live token laptop" in await arena.error_of(refused)
    assert (await verify_token(arena.bot.pool, token)).scopes == ("read",)

    revoked = text_of(await token_command(arena, tess, "revoke", {"token": "laptop"}))
    assert "revoked" in revoked and token not in revoked
    with pytest.raises(TokenRevokedError):
        await verify_token(arena.bot.pool, token)
    assert "You have no live token" in text_of(await token_command(arena, tess, "list"))


async def test_a_bad_lifetime_is_refused_with_what_to_write(arena: Arena) -> None:
    fake = arena.fake
    tess = fake.add_member("tess")
    refused = await fake.invoke_slash(tess, "token create", {"name": "ci", "expires": "forever"})
    error = await arena.error_of(refused)
    assert "12h, 30d, 2w" in error and TOKEN.search(error) is None
    assert await arena.count("personal_tokens") == 0
