"""The data the web tests read: real problems and submissions, made through the core's submit and result path."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from tests.store.store_helpers import MATMUL, VECTOR_ADD, add_problems, submit_scored

HOSTILE = '<script>alert("x")</script>&'


@dataclass(frozen=True)
class Seeded:
    """What `seeded` put in the store: submission ids by user, in the order made."""

    ranked: dict[str, int]
    benchmark: int
    failed: int


async def seed(pool: asyncpg.Pool) -> Seeded:
    """Two problems; on vector_add's h100/float32 board four users (one with a hostile name) in three languages,
    a benchmark run (private) and a failed ranked run."""
    await add_problems(pool, VECTOR_ADD, MATMUL)
    ranked = {}
    for user, score, language in (
        ("alice", 30.0, "python"),
        ("bob", 50.0, "cuda"),
        ("carol", 40.0, "triton"),
        (HOSTILE, 20.0, "cuda"),
    ):
        ranked[user] = (await submit_scored(pool, user, score, language=language)).submission_id
    benchmark = (await submit_scored(pool, "alice", 99.0, mode="benchmark")).submission_id
    failed = (await submit_scored(pool, "dave", None, status="failed")).submission_id
    return Seeded(ranked, benchmark, failed)
