"""Users: competitors and moderators, keyed by where they come from (`discord:<id>`, `local:<name>`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.store.pool import Conn


@dataclass(frozen=True)
class User:
    id: int
    external_id: str
    display_name: str
    created_at: datetime


_COLUMNS = "id, external_id, display_name, created_at"


async def ensure_user(conn: Conn, external_id: str, display_name: str) -> User:
    """The user with `external_id`, created on first sight; a changed display name is updated."""
    # One round trip on the hot path: insert or rename, else read the row as it was when the statement began.
    row = await conn.fetchrow(
        f"""
        WITH changed AS (
            INSERT INTO users (external_id, display_name) VALUES ($1, $2)
            ON CONFLICT (external_id) DO UPDATE SET display_name = EXCLUDED.display_name
                WHERE users.display_name IS DISTINCT FROM EXCLUDED.display_name
            RETURNING {_COLUMNS}
        )
        SELECT {_COLUMNS} FROM changed
        UNION ALL
        SELECT {_COLUMNS} FROM users WHERE external_id = $1 AND NOT EXISTS (SELECT 1 FROM changed)
        """,
        external_id,
        display_name,
    )
    if row is None:
        # Another transaction inserted this user after our statement began; it has committed now, so read it.
        row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM users WHERE external_id = $1", external_id)
    return User(**row)


async def get_user(conn: Conn, user_id: int) -> User | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM users WHERE id = $1", user_id)
    return User(**row) if row else None


async def find_user(conn: Conn, external_id: str) -> User | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM users WHERE external_id = $1", external_id)
    return User(**row) if row else None
