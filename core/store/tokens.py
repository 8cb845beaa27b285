"""Personal access tokens' rows (V017): insert, look up by hash, list a user's, revoke, mark used.

Every function takes a `Conn`, so callers compose them in one transaction. The token itself is never here: only
its SHA-256 and its first characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.store.pool import Conn


@dataclass(frozen=True)
class TokenRow:
    id: int
    user_id: int
    name: str
    prefix: str
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class TokenOwner:
    """A token found by its hash, with what authentication needs of its owner."""

    token: TokenRow
    token_sha256: bytes
    external_id: str
    display_name: str
    banned: bool


_COLUMNS = "id, user_id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at"


def _row(record: object) -> TokenRow:
    values = dict(record)  # type: ignore[call-overload]
    values["scopes"] = tuple(values["scopes"])
    return TokenRow(**{k: values[k] for k in TokenRow.__dataclass_fields__})


async def insert_token(
    conn: Conn, user_id: int, name: str, token_sha256: bytes, prefix: str, scopes: list[str], expires_at: datetime
) -> TokenRow:
    record = await conn.fetchrow(
        f"""INSERT INTO personal_tokens (user_id, name, token_sha256, prefix, scopes, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6) RETURNING {_COLUMNS}""",
        user_id,
        name,
        token_sha256,
        prefix,
        scopes,
        expires_at,
    )
    return _row(record)


async def live_token_count(conn: Conn, user_id: int) -> int:
    """How many of the user's tokens are neither revoked nor expired."""
    return int(
        await conn.fetchval(
            """SELECT count(*) FROM personal_tokens
            WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()""",
            user_id,
        )
    )


async def token_by_hash(conn: Conn, token_sha256: bytes) -> TokenOwner | None:
    """The token with this hash, whatever its state (the caller tells expired and revoked apart), with its owner."""
    record = await conn.fetchrow(
        f"""SELECT {", ".join("t." + c.strip() for c in _COLUMNS.split(","))}, t.token_sha256,
            u.external_id, u.display_name,
            EXISTS (SELECT 1 FROM bans b WHERE b.user_id = t.user_id AND b.lifted_at IS NULL) AS banned
        FROM personal_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_sha256 = $1""",
        token_sha256,
    )
    if record is None:
        return None
    return TokenOwner(
        token=_row(record),
        token_sha256=bytes(record["token_sha256"]),
        external_id=record["external_id"],
        display_name=record["display_name"],
        banned=record["banned"],
    )


async def token_by_id(conn: Conn, token_id: int) -> TokenOwner | None:
    """The token with this id and its owner, read without its hash (`token_sha256` is empty): for the web's
    read-only role, which may not read hashes; the caller knows the holder has the token some other way."""
    record = await conn.fetchrow(
        f"""SELECT {", ".join("t." + c.strip() for c in _COLUMNS.split(","))}, u.external_id, u.display_name,
            EXISTS (SELECT 1 FROM bans b WHERE b.user_id = t.user_id AND b.lifted_at IS NULL) AS banned
        FROM personal_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.id = $1""",
        token_id,
    )
    if record is None:
        return None
    return TokenOwner(
        token=_row(record),
        token_sha256=b"",
        external_id=record["external_id"],
        display_name=record["display_name"],
        banned=record["banned"],
    )


async def list_tokens(conn: Conn, user_id: int, *, include_gone: bool = False, limit: int = 100) -> list[TokenRow]:
    """The user's tokens, newest first; revoked and expired ones only with `include_gone`."""
    records = await conn.fetch(
        f"""SELECT {_COLUMNS} FROM personal_tokens
        WHERE user_id = $1 AND ($2 OR (revoked_at IS NULL AND expires_at > now()))
        ORDER BY id DESC LIMIT $3""",
        user_id,
        include_gone,
        limit,
    )
    return [_row(r) for r in records]


async def revoke_token(conn: Conn, user_id: int, token_id: int) -> TokenRow | None:
    """Revoke the user's own token; None when the user has no such token that is not revoked already."""
    record = await conn.fetchrow(
        f"""UPDATE personal_tokens SET revoked_at = now()
        WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING {_COLUMNS}""",
        token_id,
        user_id,
    )
    return _row(record) if record else None


async def find_token_by_name(conn: Conn, user_id: int, name: str) -> TokenRow | None:
    """The user's newest token of this name that is neither revoked nor expired."""
    record = await conn.fetchrow(
        f"""SELECT {_COLUMNS} FROM personal_tokens
        WHERE user_id = $1 AND name = $2 AND revoked_at IS NULL AND expires_at > now()
        ORDER BY id DESC LIMIT 1""",
        user_id,
        name,
    )
    return _row(record) if record else None


async def mark_used(conn: Conn, token_id: int, every_s: float) -> None:
    """Record that the token was used now, unless that was recorded within the last `every_s` seconds: a busy
    client's reads then write once a minute, not once a request."""
    await conn.execute(
        """UPDATE personal_tokens SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))""",
        token_id,
        every_s,
    )
