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


# Each report's total time over the kernels it lists, as `ProfileReport.duration_us` sums it: the order in which a
# diff picks the fastest profile to compare with.
_TOTAL_US = "(SELECT sum((k->>'duration_us')::float8) FROM jsonb_array_elements(p.report->'kernels') k)"


async def fastest_profiled_run(
    conn: Conn,
    *,
    user_id: int,
    problem_id: int,
    gpu_type: str,
    dtype: str,
    case_name: str,
    exclude_id: int,
    source_sha256: bytes | None = None,
) -> int | None:
    """The id of the user's profiled run of the problem, GPU type, dtype and case (by its name: its shapes, which a
    new version may number differently) whose profile took the least time, other than `exclude_id`; with
    `source_sha256`, of that source only. A run invalidated by a moderator, or whose profile saw no kernel (a time
    of 0 says nothing), is never chosen. The latest run wins a tie."""
    found: int | None = await conn.fetchval(
        f"""
        SELECT s.id FROM submissions s JOIN job_profiles p ON p.job_id = s.result_job_id
        WHERE s.user_id = $1 AND s.problem_id = $2 AND s.gpu_type = $3 AND s.dtype = $4 AND s.mode = 'profile'
          AND s.id <> $5 AND NOT s.invalidated AND p.report->>'case_name' = $6
          AND jsonb_array_length(p.report->'kernels') > 0
          AND ($7::bytea IS NULL OR s.source_sha256 = $7)
        ORDER BY {_TOTAL_US}, s.id DESC
        LIMIT 1
        """,
        user_id,
        problem_id,
        gpu_type,
        dtype,
        exclude_id,
        case_name,
        source_sha256,
    )
    return found


async def ranked_runs_of_source(conn: Conn, user_id: int, problem_id: int, source_sha256: bytes) -> list[int]:
    """The user's ranked runs of the problem with this very source, the earliest first: whether one of them is
    revealed says whether the code a profile ran is public."""
    rows = await conn.fetch(
        """
        SELECT id FROM submissions
        WHERE user_id = $1 AND problem_id = $2 AND source_sha256 = $3 AND mode = 'ranked'
        ORDER BY id
        """,
        user_id,
        problem_id,
        source_sha256,
    )
    return [r["id"] for r in rows]
