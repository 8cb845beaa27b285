"""Personal access tokens: a competitor calls the public API (`api/`) as themselves.

A token is `arena_pat_` and 43 URL-safe characters (256 random bits). Its owner sees it once, when it is made
(`/token create` in Discord); the store keeps its SHA-256 (a slow hash buys nothing for a secret this long) and its
first characters, so that a listing tells tokens apart without showing any. A token belongs to a user row, the
one their Discord runs use, so quotas, bans and ratings are the same whichever way they submit.

Each token has scopes (`read`: the read routes; `submit`: submissions, their events and code), an expiry (30 days
unless asked otherwise, at most a year), and may be revoked. `verify_token` tells a token that was never made
from one that expired or was revoked, and records when it was last used.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import asyncpg

from core.errors import UserFacingError
from core.store import tokens as store
from core.store import users
from core.store.tokens import TokenRow

log = logging.getLogger(__name__)

TOKEN_PREFIX: Final = "arena_pat_"
SCOPES: Final = ("read", "submit")
DEFAULT_LIFETIME: Final = timedelta(days=30)
MAX_LIFETIME: Final = timedelta(days=365)
MIN_LIFETIME: Final = timedelta(hours=1)
# Enough for a few machines and agents; a user who needs more revokes old ones.
MAX_LIVE_TOKENS: Final = 25
NAME_MAX: Final = 64
# `last_used_at` is written at most this often per token.
LAST_USED_EVERY_S: Final = 60.0
# The prefix and this many characters of the secret are kept and shown in listings.
_SHOWN_CHARS: Final = 6
_SECRET_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]{43}")
_LIFETIME_PATTERN: Final = re.compile(r"([0-9]{1,4})\s*(h|hours?|d|days?|w|weeks?)", re.IGNORECASE)


class TokenError(UserFacingError):
    """A token was refused or cannot be made. `code` is the public API's stable code for it."""

    code = "token_invalid"


class TokenInvalidError(TokenError):
    """No token like this was ever made (or it is not a personal token at all)."""

    code = "token_invalid"


class TokenExpiredError(TokenError):
    code = "token_expired"


class TokenRevokedError(TokenError):
    code = "token_revoked"


class TokenRequestError(TokenError):
    """A token cannot be made or found as asked: a bad name, lifetime or scope, too many tokens, none to revoke."""

    code = "validation_failed"


@dataclass(frozen=True)
class NewToken:
    token: str  # shown once, never stored
    row: TokenRow


@dataclass(frozen=True)
class VerifiedToken:
    """A token that is live now, and who it belongs to."""

    token_id: int
    user_id: int
    external_id: str
    display_name: str
    scopes: tuple[str, ...]
    expires_at: datetime
    banned: bool


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def looks_like_token(token: str) -> bool:
    """Whether `token` has a personal token's shape (prefix, length, alphabet); says nothing of whether it exists."""
    return token.startswith(TOKEN_PREFIX) and _SECRET_PATTERN.fullmatch(token[len(TOKEN_PREFIX) :]) is not None


def parse_lifetime(text: str | None) -> timedelta:
    """`30d`, `12h`, `2w`, `90 days` (None or empty: 30 days), between an hour and a year."""
    if text is None or not text.strip():
        return DEFAULT_LIFETIME
    match = _LIFETIME_PATTERN.fullmatch(text.strip())
    if match is None:
        raise TokenRequestError(
            f"Cannot read the lifetime {text!r}: write a number of hours, days or weeks: 12h, 30d, 2w."
        )
    count, unit = int(match.group(1)), match.group(2)[0].lower()
    lifetime = {"h": timedelta(hours=count), "d": timedelta(days=count), "w": timedelta(weeks=count)}[unit]
    if not MIN_LIFETIME <= lifetime <= MAX_LIFETIME:
        raise TokenRequestError("A token lives between 1 hour and 365 days; choose a lifetime in that range.")
    return lifetime


def parse_scopes(scopes: Iterable[str] | str | None) -> list[str]:
    """The scopes asked for, in their canonical order: `read`, `submit`, or both (None: both)."""
    if scopes is None:
        return list(SCOPES)
    names = scopes.replace(",", " ").split() if isinstance(scopes, str) else list(scopes)
    unknown = sorted(set(names) - set(SCOPES))
    if unknown:
        raise TokenRequestError(f"Unknown scope {', '.join(unknown)}: the scopes are {' and '.join(SCOPES)}.")
    if not names:
        raise TokenRequestError(f"Give a token at least one scope: {' or '.join(SCOPES)}.")
    return [s for s in SCOPES if s in names]


def _check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= NAME_MAX or not name.isprintable():
        raise TokenRequestError(f"Name the token in 1 to {NAME_MAX} printable characters, such as `laptop` or `ci`.")
    return name


async def create_token(
    pool: asyncpg.Pool,
    external_id: str,
    display_name: str,
    name: str,
    *,
    scopes: Iterable[str] | str | None = None,
    lifetime: timedelta = DEFAULT_LIFETIME,
    now: datetime | None = None,
) -> NewToken:
    """A new token for the user behind `external_id` (recorded on first sight); only its hash is stored."""
    name = _check_name(name)
    wanted = parse_scopes(scopes)
    if not MIN_LIFETIME <= lifetime <= MAX_LIFETIME:
        raise TokenRequestError("A token lives between 1 hour and 365 days; choose a lifetime in that range.")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = (now or datetime.now(UTC)) + lifetime
    async with pool.acquire() as conn, conn.transaction():
        user = await users.ensure_user(conn, external_id, display_name[:100] or external_id)
        # Serialise one user's creations, so two at once cannot both pass the cap.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('personal_tokens'), hashtext($1))", external_id)
        if await store.live_token_count(conn, user.id) >= MAX_LIVE_TOKENS:
            raise TokenRequestError(
                f"You have {MAX_LIVE_TOKENS} live tokens already; revoke one you no longer use (/token revoke)."
            )
        row = await store.insert_token(
            conn, user.id, name, token_digest(token), token[: len(TOKEN_PREFIX) + _SHOWN_CHARS], wanted, expires_at
        )
    log.info(
        "personal token %d made for user %d (scopes %s, expires %s)", row.id, user.id, ",".join(wanted), expires_at
    )
    return NewToken(token, row)


async def list_tokens(pool: asyncpg.Pool, external_id: str, *, include_gone: bool = False) -> list[TokenRow]:
    """The user's tokens, newest first, without their secrets; revoked and expired ones only with `include_gone`."""
    user = await users.find_user(pool, external_id)
    if user is None:
        return []
    return await store.list_tokens(pool, user.id, include_gone=include_gone)


async def revoke_token(pool: asyncpg.Pool, external_id: str, which: str | int) -> TokenRow:
    """Revoke one of the user's own live tokens, named by its id (`12`, `#12`) or its name."""
    user = await users.find_user(pool, external_id)
    row: TokenRow | None = None
    if user is not None:
        text = str(which).strip().removeprefix("#")
        if text.isascii() and text.isdigit() and len(text) <= 18:
            row = await store.revoke_token(pool, user.id, int(text))
        if row is None:
            by_name = await store.find_token_by_name(pool, user.id, str(which).strip())
            if by_name is not None:
                row = await store.revoke_token(pool, user.id, by_name.id)
    if row is None:
        raise TokenRequestError(f"You have no live token {which!s}; /token list shows their ids and names.")
    log.info("personal token %d of user %d revoked", row.id, row.user_id)
    return row


async def verify_token(pool: asyncpg.Pool, token: str, *, now: datetime | None = None) -> VerifiedToken:
    """The live token `token` and its owner. Raises TokenInvalidError, TokenExpiredError or TokenRevokedError."""
    if not looks_like_token(token):
        raise TokenInvalidError(
            f"This is not a personal token: they start with `{TOKEN_PREFIX}`; make one with /token create."
        )
    digest = token_digest(token)
    found = await store.token_by_hash(pool, digest)
    # The lookup is by hash, so its timing says nothing of the secret; the compare is constant-time regardless.
    if found is None or not hmac.compare_digest(found.token_sha256, digest):
        raise TokenInvalidError("This token is not known; check it was copied whole, or make one with /token create.")
    verified = _verified(found, now)
    await store.mark_used(pool, verified.token_id, LAST_USED_EVERY_S)
    return verified


def _verified(found: store.TokenOwner, now: datetime | None) -> VerifiedToken:
    row = found.token
    if row.revoked_at is not None:
        raise TokenRevokedError(f"This token ({row.name}) was revoked; make a new one with /token create.")
    if row.expires_at <= (now or datetime.now(UTC)):
        raise TokenExpiredError(
            f"This token ({row.name}) expired at {row.expires_at:%Y-%m-%d %H:%M} UTC; "
            "make a new one with /token create."
        )
    return VerifiedToken(
        token_id=row.id,
        user_id=row.user_id,
        external_id=found.external_id,
        display_name=found.display_name,
        scopes=row.scopes,
        expires_at=row.expires_at,
        banned=found.banned,
    )


async def live_token_by_id(pool: asyncpg.Pool, token_id: int, *, now: datetime | None = None) -> VerifiedToken:
    """The live token with this id and its owner, read only, never by its secret: for the web, whose read-only role
    may not read token hashes, and which knows its visitor holds the token by a cookie it signed itself. Raises
    TokenInvalidError, TokenExpiredError or TokenRevokedError as `verify_token` does."""
    found = await store.token_by_id(pool, token_id)
    if found is None:
        raise TokenInvalidError("This token is not known; sign in again.")
    return _verified(found, now)
