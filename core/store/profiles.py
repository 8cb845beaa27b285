"""Profiles of mode `profile` jobs: Nsight Compute's report for each job, and the files that came with it.

The report is stored as the wire model's JSON without its files; the files are stored as bytes in their own
rows (migration V003 says why). `core.results` turns a `contract.wire.ProfileReport` into these and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.store.pool import Conn


@dataclass(frozen=True)
class StoredArtifact:
    name: str
    data: bytes


@dataclass(frozen=True)
class StoredProfile:
    report: dict[str, Any]
    """The report's JSON, its artifacts left out."""
    artifacts: tuple[StoredArtifact, ...]
    """In the report's order; empty when read without them."""


async def insert_profile(conn: Conn, job_id: int, report: dict[str, Any], artifacts: Sequence[StoredArtifact]) -> None:
    """Store a job's profile; inside the transaction that records the job's result."""
    await conn.execute("INSERT INTO job_profiles (job_id, report) VALUES ($1, $2)", job_id, report)
    if artifacts:
        await conn.executemany(
            "INSERT INTO profile_artifacts (job_id, idx, name, data) VALUES ($1, $2, $3, $4)",
            [(job_id, idx, a.name, a.data) for idx, a in enumerate(artifacts)],
        )


async def get_profile(conn: Conn, job_id: int, *, with_artifacts: bool = True) -> StoredProfile | None:
    """The job's profile in one round trip, or None when it has none; `with_artifacts=False` leaves the files
    (up to hundreds of kilobytes each) in the store, for a reader that shows only the figures."""
    row = await conn.fetchrow(
        """
        SELECT p.report,
               coalesce(array_agg(a.name ORDER BY a.idx) FILTER (WHERE a.idx IS NOT NULL), '{}') AS names,
               coalesce(array_agg(a.data ORDER BY a.idx) FILTER (WHERE a.idx IS NOT NULL), '{}') AS blobs
        FROM job_profiles p
        LEFT JOIN profile_artifacts a ON a.job_id = p.job_id AND $2
        WHERE p.job_id = $1
        GROUP BY p.job_id
        """,
        job_id,
        with_artifacts,
    )
    if row is None:
        return None
    artifacts = tuple(StoredArtifact(name, bytes(data)) for name, data in zip(row["names"], row["blobs"], strict=True))
    return StoredProfile(row["report"], artifacts)
