"""Users of a chat platform as the store keys them (`discord:<id>`), and moderator actions on members.

The core's moderation functions act on users who have submitted; a moderator may also ban someone who has
not submitted yet, so `ban_member` records the user first.
"""

from __future__ import annotations

import asyncpg

from core.moderation import Actor, ban_user
from core.store import users
from core.store.moderation import Ban

PLATFORM = "discord"


def external_id(member_id: int) -> str:
    """The store's key for a chat member."""
    return f"{PLATFORM}:{member_id}"


def actor(member_id: int, display_name: str) -> Actor:
    return Actor(external_id(member_id), display_name[:100] or str(member_id))


async def ban_member(pool: asyncpg.Pool, by: Actor, member_id: int, display_name: str, reason: str) -> Ban:
    """Ban a member from submitting, whether or not they have submitted before."""
    await users.ensure_user(pool, external_id(member_id), display_name[:100] or str(member_id))
    return await ban_user(pool, by, external_id(member_id), reason)
