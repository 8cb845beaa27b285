"""Personal access tokens in the real store: made for the Discord user's own row, kept as a hash, listed without
the secret, verified (unknown, expired and revoked told apart), revoked by id or name, capped per user."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core import tokens
from core.members import external_id
from core.moderation import Actor, ban_user
from core.settings import StoreSettings
from core.store import users
from core.store.pool import open_reader_store
from core.tokens import (
    TokenExpiredError,
    TokenInvalidError,
    TokenRequestError,
    TokenRevokedError,
    create_token,
    list_tokens,
    parse_lifetime,
    parse_scopes,
    revoke_token,
    verify_token,
)

ALICE = external_id(1001)


async def test_a_token_is_made_for_the_users_own_row_and_only_its_hash_is_kept(pool: asyncpg.Pool) -> None:
    before = datetime.now(UTC)
    made = await create_token(pool, ALICE, "alice", "laptop")
    assert made.token.startswith("arena_pat_") and len(made.token) == len("arena_pat_") + 43
    assert made.row.scopes == ("read", "submit") and made.row.name == "laptop"
    # Thirty days by default.
    assert timedelta(days=30) <= made.row.expires_at - before < timedelta(days=30, minutes=1)
    user = await users.find_user(pool, ALICE)
    assert user is not None and made.row.user_id == user.id
    stored = await pool.fetchrow("SELECT * FROM personal_tokens WHERE id = $1", made.row.id)
    assert bytes(stored["token_sha256"]) == tokens.token_digest(made.token)
    assert made.token not in repr(dict(stored)) and stored["prefix"] == made.token[:16]

    verified = await verify_token(pool, made.token)
    assert (verified.user_id, verified.external_id, verified.token_id) == (user.id, ALICE, made.row.id)
    assert not verified.banned
    last_used = await pool.fetchval("SELECT last_used_at FROM personal_tokens WHERE id = $1", made.row.id)
    assert last_used is not None


async def test_listing_shows_names_and_prefixes_never_the_secret(pool: asyncpg.Pool) -> None:
    a = await create_token(pool, ALICE, "alice", "laptop")
    b = await create_token(pool, ALICE, "alice", "ci", scopes="read")
    await create_token(pool, external_id(2002), "bob", "bob's")
    listed = await list_tokens(pool, ALICE)
    assert [t.id for t in listed] == [b.row.id, a.row.id]
    assert listed[0].scopes == ("read",)
    assert a.token not in repr(listed) and b.token not in repr(listed)
    assert await list_tokens(pool, external_id(3003)) == []


async def test_revoked_expired_and_unknown_tokens_are_told_apart(pool: asyncpg.Pool) -> None:
    made = await create_token(pool, ALICE, "alice", "laptop")
    old = await create_token(
        pool, ALICE, "alice", "old", lifetime=timedelta(hours=1), now=datetime.now(UTC) - timedelta(hours=2)
    )
    with pytest.raises(TokenExpiredError, match="expired at"):
        await verify_token(pool, old.token)
    with pytest.raises(TokenInvalidError, match="not known"):
        await verify_token(pool, "arena_pat_" + "A" * 43)
    with pytest.raises(TokenInvalidError, match="start with"):
        await verify_token(pool, "ghp_notours")
    revoked = await revoke_token(pool, ALICE, "laptop")
    assert revoked.id == made.row.id and revoked.revoked_at is not None
    with pytest.raises(TokenRevokedError, match="revoked"):
        await verify_token(pool, made.token)
    assert [t.name for t in await list_tokens(pool, ALICE)] == []
    assert {t.name for t in await list_tokens(pool, ALICE, include_gone=True)} == {"laptop", "old"}
    # Twice, or someone else's, is refused with what to do.
    with pytest.raises(TokenRequestError, match="/token list"):
        await revoke_token(pool, ALICE, made.row.id)
    other = await create_token(pool, external_id(2002), "bob", "bob's")
    with pytest.raises(TokenRequestError):
        await revoke_token(pool, ALICE, f"#{other.row.id}")
    assert (await verify_token(pool, other.token)).external_id == external_id(2002)


async def test_a_banned_users_token_says_so(pool: asyncpg.Pool) -> None:
    made = await create_token(pool, ALICE, "alice", "laptop")
    await ban_user(pool, Actor("local:mod", "mod"), ALICE, "spam")
    assert (await verify_token(pool, made.token)).banned


async def test_names_lifetimes_scopes_and_the_cap_are_checked(pool: asyncpg.Pool) -> None:
    assert parse_lifetime(None) == timedelta(days=30)
    assert parse_lifetime("12h") == timedelta(hours=12)
    assert parse_lifetime("2 weeks") == timedelta(weeks=2)
    for bad in ("forever", "0d", "400d", "-3d"):
        with pytest.raises(TokenRequestError):
            parse_lifetime(bad)
    assert parse_scopes("submit, read") == ["read", "submit"]
    with pytest.raises(TokenRequestError, match="Unknown scope admin"):
        parse_scopes("read admin")
    with pytest.raises(TokenRequestError, match="printable"):
        await create_token(pool, ALICE, "alice", "")
    for i in range(tokens.MAX_LIVE_TOKENS):
        await create_token(pool, ALICE, "alice", f"t{i}")
    with pytest.raises(TokenRequestError, match="revoke one"):
        await create_token(pool, ALICE, "alice", "one too many")
    await revoke_token(pool, ALICE, "t0")
    assert (await create_token(pool, ALICE, "alice", "room again")).row.name == "room again"


async def test_the_webs_read_only_role_cannot_read_token_hashes(pool: asyncpg.Pool, db_dsn: str) -> None:
    await create_token(pool, ALICE, "alice", "laptop")
    async with open_reader_store(StoreSettings(database_url=db_dsn)) as store:
        assert await store.pool.fetchval("SELECT count(*) FROM users") == 1
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.pool.fetchval("SELECT token_sha256 FROM personal_tokens")
