"""Batches' rows (V026): a batch of one user's variants of one problem, and its members in the order they were
sent. Every function takes a `Conn`, so callers compose them in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from contract.names import DType, Mode
from core.store.pool import Conn


@dataclass(frozen=True)
class BatchRow:
    id: int
    user_id: int
    problem_id: int
    mode: Mode
    dtype: DType
    gpu_type: str
    created_at: datetime
    submission_ids: tuple[int, ...]  # the variants, in the order they were sent


_SELECT = """
    SELECT b.id, b.user_id, b.problem_id, b.mode, b.dtype, b.gpu_type, b.created_at,
           array(SELECT m.submission_id FROM batch_members m WHERE m.batch_id = b.id ORDER BY m.position)
               AS submission_ids
    FROM submission_batches b
"""


def _row(record: object) -> BatchRow:
    values = dict(record)  # type: ignore[call-overload]
    values["submission_ids"] = tuple(values["submission_ids"])
    return BatchRow(**values)


async def insert_batch(
    conn: Conn,
    user_id: int,
    problem_id: int,
    mode: Mode,
    dtype: DType,
    gpu_type: str,
    submission_ids: Sequence[int],
    client_token: str | None = None,
) -> BatchRow:
    """Store the batch and its members; with a `client_token` the user sent before, the batch stored then."""
    batch_id = await conn.fetchval(
        """
        INSERT INTO submission_batches (user_id, problem_id, mode, dtype, gpu_type, client_token)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (user_id, client_token) DO NOTHING
        RETURNING id
        """,
        user_id,
        problem_id,
        mode,
        dtype,
        gpu_type,
        client_token,
    )
    if batch_id is None:  # the same key again: the first batch answers
        found = await conn.fetchrow(_SELECT + " WHERE b.user_id = $1 AND b.client_token = $2", user_id, client_token)
        return _row(found)
    await conn.executemany(
        "INSERT INTO batch_members (batch_id, position, submission_id) VALUES ($1, $2, $3)",
        [(batch_id, position, sub_id) for position, sub_id in enumerate(submission_ids)],
    )
    found = await get_batch(conn, batch_id)
    assert found is not None
    return found


async def get_batch(conn: Conn, batch_id: int) -> BatchRow | None:
    row = await conn.fetchrow(_SELECT + " WHERE b.id = $1", batch_id)
    return _row(row) if row else None
