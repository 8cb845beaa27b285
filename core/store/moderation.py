"""Bans, invalidations and the audit log of moderator actions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from core.errors import ModerationError
from core.store.pool import Conn


@dataclass(frozen=True)
class Ban:
    id: int
    user_id: int
    reason: str
    banned_by: int | None
    created_at: datetime
    lifted_at: datetime | None


@dataclass(frozen=True)
class AuditEntry:
    id: int
    actor_id: int | None
    action: str
    target: str
    reason: str | None
    details: dict[str, Any]
    created_at: datetime
    actor_name: str | None = None


_BAN_COLUMNS = "id, user_id, reason, banned_by, created_at, lifted_at"


async def active_ban(conn: Conn, user_id: int) -> Ban | None:
    row = await conn.fetchrow(f"SELECT {_BAN_COLUMNS} FROM bans WHERE user_id = $1 AND lifted_at IS NULL", user_id)
    return Ban(**row) if row else None


async def insert_ban(conn: Conn, user_id: int, reason: str, banned_by: int | None) -> Ban:
    try:
        row = await conn.fetchrow(
            f"INSERT INTO bans (user_id, reason, banned_by) VALUES ($1, $2, $3) RETURNING {_BAN_COLUMNS}",
            user_id,
            reason,
            banned_by,
        )
    except asyncpg.UniqueViolationError as exc:
        raise ModerationError("That user is banned already; unban them first to change the reason.") from exc
    return Ban(**row)


async def lift_ban(conn: Conn, user_id: int, lifted_by: int | None) -> Ban | None:
    """Lift the active ban; None when the user was not banned."""
    row = await conn.fetchrow(
        f"""UPDATE bans SET lifted_at = now(), lifted_by = $2 WHERE user_id = $1 AND lifted_at IS NULL
        RETURNING {_BAN_COLUMNS}""",
        user_id,
        lifted_by,
    )
    return Ban(**row) if row else None


async def insert_invalidation(conn: Conn, submission_id: int, reason: str, invalidated_by: int | None) -> None:
    try:
        await conn.execute(
            "INSERT INTO invalidations (submission_id, reason, invalidated_by) VALUES ($1, $2, $3)",
            submission_id,
            reason,
            invalidated_by,
        )
    except asyncpg.UniqueViolationError as exc:
        raise ModerationError(f"Submission {submission_id} is invalidated already.") from exc
    await conn.execute("UPDATE submissions SET invalidated = true WHERE id = $1", submission_id)


async def delete_invalidation(conn: Conn, submission_id: int) -> bool:
    """Undo an invalidation (the audit log keeps the record); False when it was not invalidated."""
    status = await conn.execute("DELETE FROM invalidations WHERE submission_id = $1", submission_id)
    if status == "DELETE 0":
        return False
    await conn.execute("UPDATE submissions SET invalidated = false WHERE id = $1", submission_id)
    return True


async def invalidation_reason(conn: Conn, submission_id: int) -> str | None:
    value: str | None = await conn.fetchval("SELECT reason FROM invalidations WHERE submission_id = $1", submission_id)
    return value


async def audit(
    conn: Conn, actor_id: int | None, action: str, target: str, reason: str | None, details: dict[str, Any]
) -> None:
    await conn.execute(
        "INSERT INTO audit_log (actor_id, action, target, reason, details) VALUES ($1, $2, $3, $4, $5)",
        actor_id,
        action,
        target,
        reason,
        details,
    )


async def audit_log(conn: Conn, target: str | None = None, limit: int = 50) -> list[AuditEntry]:
    """Moderator actions, newest first, optionally on one target (`user:7`, `submission:42`, `problem:matmul`,
    `contest:spring`), each with its moderator's display name."""
    rows = await conn.fetch(
        """SELECT a.id, a.actor_id, a.action, a.target, a.reason, a.details, a.created_at, u.display_name AS actor_name
        FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
        WHERE $1::text IS NULL OR a.target = $1 ORDER BY a.id DESC LIMIT $2""",
        target,
        limit,
    )
    return [AuditEntry(**r) for r in rows]
