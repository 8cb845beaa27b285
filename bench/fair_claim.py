"""The fair queue's cost: `claim_next` and `queue_position` with 100,000 queued jobs of 1,000 users.

    python bench/fair_claim.py --out bench/results/fair_claim.txt

Loads synthetic data with COPY into a fresh database (a new embedded server in a temporary directory, or
DATABASE_URL when set): users whose shares of the queue are spread log-normally (a few heavy users, many light
ones), two problems, and one queued job per submission, 90 % of them on `h100` and the rest on `a100`, in every
mode (`test` 15 %, `benchmark` 30 %, `profile` 5 %, `ranked` 50 %) and dtype. The jobs go through the same
trigger as the submit path's (V012 fills each job's user and mode). A contest on the first problem at
h100/float32 runs, with a reserved share of its pool; half the submissions were made since it started.

It then times, through core.store.jobs, on the h100 queue:
- `claim_next` as a dispatcher calls it, each claimed job finished at once (untimed) so that the jobs in flight stay
  as few as a pool's slots: with no slot count (no reservation), for a quarantined runner (`ranked=False`), with a
  contest short of its share (its oldest run goes), with the share met (the check, then the modes), and with a
  re-run waiting (it goes first);
- `queue_position` and `start_estimate` of random queued jobs (what `/quota` and the progress message read).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.settings import StoreSettings  # noqa: E402
from core.store import jobs  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool, with_database  # noqa: E402

GPUS = (("h100", 0.9), ("a100", 0.1))
MODES = (("test", 0.15), ("benchmark", 0.3), ("profile", 0.05), ("ranked", 0.5))
DTYPES = (("float32", 0.6), ("float16", 0.25), ("bfloat16", 0.15))
LEASE_S = 60.0
CHUNK = 50_000


@dataclass(frozen=True)
class Config:
    jobs: int
    users: int
    claims: int
    positions: int
    share: float
    seed: int


def pick(rng: random.Random, table: tuple[tuple[str, float], ...]) -> str:
    return rng.choices([t[0] for t in table], weights=[t[1] for t in table])[0]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return f"p50 {q[49]:7.2f} ms   p95 {q[94]:7.2f} ms   p99 {q[98]:7.2f} ms   max {ordered[-1]:7.2f} ms"


async def load(conn: asyncpg.Connection, cfg: Config) -> None:
    """Users, two problems, a running contest with a reserved share, and `cfg.jobs` queued submissions."""
    rng = random.Random(cfg.seed)
    await conn.copy_records_to_table(
        "users",
        columns=["id", "external_id", "display_name"],
        records=[(i, f"discord:{i}", f"user{i}") for i in range(1, cfg.users + 1)],
    )
    async with conn.transaction():  # problems.current_version's foreign key is checked at commit
        await conn.copy_records_to_table(
            "problems",
            columns=["id", "slug", "title", "current_version"],
            records=[(1, "p-1", "P1", 1), (2, "p-2", "P2", 1)],
        )
        await conn.copy_records_to_table(
            "problem_versions",
            columns=["problem_id", "version", "dtypes"],
            records=[(p, 1, ["float32", "float16", "bfloat16"]) for p in (1, 2)],
        )
    body = "// bench\n"
    sha = hashlib.sha256(body.encode()).digest()
    await conn.execute("INSERT INTO sources (sha256, body, size_bytes) VALUES ($1, $2, $3)", sha, body, len(body))
    now = datetime.now(UTC)
    contest_id = await conn.fetchval(
        """INSERT INTO contests (slug, title, starts_at, ends_at, reserve_share) VALUES ('bench', 'Bench', $1, $2, $3)
        RETURNING id""",
        now - timedelta(minutes=30),
        now + timedelta(hours=1),
        cfg.share,
    )
    await conn.execute(
        "INSERT INTO contest_problems (contest_id, problem_id, problem_version, position, public_before) "
        "VALUES ($1, 1, 1, 0, true)",
        contest_id,
    )
    await conn.execute(
        "INSERT INTO contest_targets (contest_id, gpu_type, dtype) VALUES ($1, 'h100', 'float32')", contest_id
    )
    weights = [rng.lognormvariate(0, 1.5) for _ in range(cfg.users)]
    users = rng.choices(range(1, cfg.users + 1), weights=weights, k=cfg.jobs)
    start, step = now - timedelta(hours=1), timedelta(hours=1) / cfg.jobs
    columns = ["id", "user_id", "problem_id", "problem_version", "source_sha256", "file_name", "language", "dtype"]
    columns += ["mode", "gpu_type", "created_at"]
    for first in range(0, cfg.jobs, CHUNK):
        rows = [
            (i + 1, users[i], rng.choice((1, 2)), 1, sha, "solution.cu", "cuda", pick(rng, DTYPES), pick(rng, MODES),
             pick(rng, GPUS), start + step * i)
            for i in range(first, min(first + CHUNK, cfg.jobs))
        ]  # fmt: skip
        await conn.copy_records_to_table("submissions", columns=columns, records=rows)
        queued = [(r[0], r[0], r[9], r[10]) for r in rows]
        await conn.copy_records_to_table(
            "jobs", columns=["id", "submission_id", "gpu_type", "created_at"], records=queued
        )
    for table in ("users", "submissions", "jobs"):
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    await conn.execute("VACUUM ANALYZE")


async def timed(
    calls: int, call: Callable[[], Awaitable[object]], after: Callable[[object], Awaitable[None]]
) -> list[float]:
    """Time `call` `calls` times, after 10 untimed (the statement cache warms); `after` runs untimed on each result."""
    samples = []
    for i in range(calls + 10):
        start = time.perf_counter()
        result = await call()
        elapsed = (time.perf_counter() - start) * 1000
        if i >= 10:
            samples.append(elapsed)
        await after(result)
    return samples


async def measure(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> dict[str, list[float]]:
    rng = random.Random(cfg.seed + 1)

    async def finish(lease: object) -> None:
        assert isinstance(lease, jobs.Lease), "the queue ran dry: load more jobs"
        await jobs.finish(pool, lease, "done")

    def claim(**kw: object) -> Callable[[], Awaitable[object]]:
        return lambda: jobs.claim_next(pool, "h100", "bench", LEASE_S, "runner-1", **kw)  # type: ignore[arg-type]

    stats = await pool.fetchrow(
        """SELECT sum(n)::bigint AS queued, count(*) AS users, sum(h100)::bigint AS h100, max(n) AS heaviest FROM (
            SELECT user_id, count(*) AS n, count(*) FILTER (WHERE gpu_type = 'h100') AS h100 FROM jobs
            WHERE state = 'queued' GROUP BY user_id) AS per_user"""
    )
    out.append(
        f"queue: {stats['queued']:,} queued jobs of {stats['users']:,} users, {stats['h100']:,} of them on h100; "
        f"the heaviest user has {stats['heaviest']:,}"
    )
    results: dict[str, list[float]] = {}
    results["claim_next, no reservation (capacity None)"] = await timed(cfg.claims, claim(), finish)
    results["claim_next, quarantined runner (ranked=False)"] = await timed(cfg.claims, claim(ranked=False), finish)
    # A pool of 10,000 slots: the contest is always short of its share, so its oldest run goes.
    results["claim_next, contest short of its share"] = await timed(cfg.claims, claim(capacity=10_000), finish)
    # A pool of 8 slots with the contest's share of them in flight: the check, then the modes.
    held = [await jobs.claim_next(pool, "h100", "bench", LEASE_S, "runner-1", capacity=8) for _ in range(8)]
    results["claim_next, contest share met (8 slots)"] = await timed(cfg.claims, claim(capacity=8), finish)
    for lease in held:
        await finish(lease)

    async def requeue_next(lease: object) -> None:
        await finish(lease)
        waiting = await jobs.claim_next(pool, "h100", "bench", LEASE_S, "runner-1")
        assert waiting is not None
        await jobs.requeue(pool, waiting, "bench: runner lost", 0.0)

    await requeue_next(await jobs.claim_next(pool, "h100", "bench", LEASE_S, "runner-1"))
    results["claim_next, a re-run waiting"] = await timed(cfg.claims, claim(), requeue_next)

    ids = [r["id"] for r in await pool.fetch("SELECT id FROM jobs WHERE state = 'queued' AND gpu_type = 'h100'")]
    picks = rng.sample(ids, cfg.positions)
    it = iter(picks * 2)

    async def nothing(_: object) -> None:
        return None

    results["queue_position"] = await timed(cfg.positions - 10, lambda: jobs.queue_position(pool, next(it)), nothing)
    results["start_estimate"] = await timed(cfg.positions - 10, lambda: jobs.start_estimate(pool, next(it)), nothing)
    for name, samples in results.items():
        out.append(f"{name:<46} ({len(samples)} calls): {percentiles(samples)}")
    return results


async def run(cfg: Config, out: list[str]) -> dict[str, list[float]]:
    settings = StoreSettings()
    tmp = None
    if settings.database_url is not None:
        admin_dsn, server = settings.database_url.get_secret_value(), None
    else:
        tmp = Path(tempfile.mkdtemp(prefix="arena-bench-fair-"))
        server = await start_embedded(tmp / "pg")
        admin_dsn = server.dsn()
    try:
        admin = await asyncpg.connect(admin_dsn)
        await admin.execute("DROP DATABASE IF EXISTS arena_bench_fair WITH (FORCE)")
        await admin.execute("CREATE DATABASE arena_bench_fair")
        version = await admin.fetchval("SHOW server_version")
        await admin.close()
        out.append(f"server: PostgreSQL {version} ({'embedded' if server else 'DATABASE_URL'})")
        dsn = with_database(admin_dsn, "arena_bench_fair")
        conn = await asyncpg.connect(dsn)
        try:
            await migrate(conn)
            start = time.perf_counter()
            await load(conn, cfg)
            out.append(
                f"load: {cfg.jobs:,} submissions and their queued jobs in {time.perf_counter() - start:.0f} s (COPY)"
            )
        finally:
            await conn.close()
        async with create_pool(dsn, min_size=2, max_size=2, command_timeout=120) as pool:
            return await measure(pool, cfg, out)
    finally:
        if server is not None:
            await server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--claims", type=int, default=300, help="timed claims per case")
    parser.add_argument("--positions", type=int, default=100, help="timed calls of each position read")
    parser.add_argument("--share", type=float, default=0.25, help="the contest's reserved share of its pool")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    cfg = Config(args.jobs, args.users, args.claims, args.positions, args.share, args.seed)
    out = [
        f"fair_claim {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.machine()}, {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()}, asyncpg {asyncpg.__version__}",
        f"data: {cfg.jobs:,} queued jobs, {cfg.users:,} users, contest share {cfg.share:g}, seed {cfg.seed}; "
        f"modes served in the order {', '.join(jobs.MODE_PRIORITY)}",
    ]
    asyncio.run(run(cfg, out))
    # The machine is shared: its load says how far these times are from an idle one's.
    out.append("load average after the run (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    report = "\n".join(out) + "\n"
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
