"""Store at scale: a million submissions behind the leaderboards, and the submit path's throughput.

    python bench/store_scale.py --out bench/results/store_scale.txt

Loads synthetic data with COPY into a fresh database (a new embedded server in a temporary directory, or
DATABASE_URL when set): 5,000 users, 50 problems (10 with a second version), 1,000,000 submissions with one
job each, a few bans and invalidations; then builds the leaderboards. It times, through the same core calls
the bot and the CLI make, the top-20 of a board and one user's rank (p50/p95/p99), on the fullest board and on
random boards, and then `submit()` with concurrent callers at the default durability (synchronous commit).
Goals: p95 <= 10 ms for both queries, >= 500 submits/s.
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
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.leaderboard import get_leaderboard, get_rank  # noqa: E402
from core.settings import RateLimitSettings, StoreSettings  # noqa: E402
from core.store import leaderboard  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool, with_database  # noqa: E402
from core.submit.intake import SubmitRequest, submit  # noqa: E402
from core.submit.uploads import check_upload  # noqa: E402

GPUS = (("h100", 0.5), ("a100", 0.3), ("l4", 0.2))
DTYPES = (("float32", 0.6), ("float16", 0.25), ("bfloat16", 0.15))
LANGUAGES = (("cuda", ".cu", 0.5), ("triton", ".py", 0.3), ("python", ".py", 0.2))
MODES = (("ranked", 0.5), ("benchmark", 0.3), ("test", 0.2))
STATUSES = (("passed", 0.75), ("failed", 0.15), ("error", 0.10))
CHUNK = 100_000


@dataclass(frozen=True)
class Config:
    submissions: int
    users: int
    problems: int
    sources: int
    queries: int
    submits: int
    concurrency: int
    seed: int


def pick(rng: random.Random, table: tuple[tuple[str, float], ...]) -> str:
    return rng.choices([t[0] for t in table], weights=[t[1] for t in table])[0]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return f"p50 {q[49]:6.2f} ms   p95 {q[94]:6.2f} ms   p99 {q[98]:6.2f} ms   max {ordered[-1]:6.2f} ms"


async def load_reference(conn: asyncpg.Connection, cfg: Config, rng: random.Random) -> list[tuple[int, int]]:
    """Users, problems and their versions, sources; returns (problem_id, current_version) per problem."""
    await conn.copy_records_to_table(
        "users",
        columns=["id", "external_id", "display_name"],
        records=[(i, f"discord:{i}", f"user{i}") for i in range(1, cfg.users + 1)],
    )
    problems, versions = [], []
    for p in range(1, cfg.problems + 1):
        current = 2 if p % 5 == 0 else 1
        problems.append((p, f"problem-{p:02d}", f"Problem {p}", current))
        versions += [(p, v, ["float32", "float16", "bfloat16"]) for v in range(1, current + 1)]
    async with conn.transaction():  # problems.current_version's foreign key is checked at commit
        await conn.copy_records_to_table(
            "problems", columns=["id", "slug", "title", "current_version"], records=problems
        )
        await conn.copy_records_to_table(
            "problem_versions", columns=["problem_id", "version", "dtypes"], records=versions
        )
    sources = []
    for i in range(cfg.sources):
        body = f"// solution {i}\n" + "x" * rng.randrange(100, 400)
        sources.append((hashlib.sha256(body.encode()).digest(), body, len(body)))
    await conn.copy_records_to_table("sources", columns=["sha256", "body", "size_bytes"], records=sources)
    return [(p[0], p[3]) for p in problems]


Row = tuple[object, ...]


def submission_rows(
    cfg: Config, rng: random.Random, problems: list[tuple[int, int]], hashes: list[bytes]
) -> Iterator[list[Row]]:
    """Chunks of submission rows, ids ascending with time, popular problems and busy users weighted."""
    user_weights = [rng.lognormvariate(0, 1) for _ in range(cfg.users)]
    problem_weights = [1 / (i + 1) ** 0.8 for i in range(cfg.problems)]
    base_score = [rng.uniform(100, 10_000) for _ in range(cfg.problems)]
    skill = [rng.lognormvariate(0, 0.5) for _ in range(cfg.users)]
    start = datetime(2026, 3, 1, tzinfo=UTC)
    step = timedelta(days=180) / cfg.submissions
    users = rng.choices(range(cfg.users), weights=user_weights, k=cfg.submissions)
    picks = rng.choices(range(cfg.problems), weights=problem_weights, k=cfg.submissions)
    chunk: list[Row] = []
    for i in range(cfg.submissions):
        u, p = users[i], picks[i]
        problem_id, current = problems[p]
        version = current if current == 1 or rng.random() < 0.6 else 1
        language, suffix, _ = rng.choices(LANGUAGES, weights=[w for *_, w in LANGUAGES])[0]
        mode, status, gpu = pick(rng, MODES), pick(rng, STATUSES), pick(rng, GPUS)
        created = start + step * i
        score = base_score[p] * skill[u] * rng.lognormvariate(0, 0.3) if status == "passed" and mode != "test" else None
        chunk.append(
            (
                i + 1,
                u + 1,
                problem_id,
                version,
                hashes[rng.randrange(len(hashes))],
                f"solution{suffix}",
                language,
                pick(rng, DTYPES),
                mode,
                gpu,
                status,
                score,
                score,
                "gflops",
                "H100",
                "runner-1",
                created,
                created,
                created + timedelta(seconds=20),
                "cpu" if gpu == "cpu" else "arena",  # the runner's method: boards are kept per method
            )
        )
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


SUBMISSION_COLUMNS = [
    "id",
    "user_id",
    "problem_id",
    "problem_version",
    "source_sha256",
    "file_name",
    "language",
    "dtype",
    "mode",
    "gpu_type",
    "status",
    "score",
    "mean_score",
    "score_metric",
    "device",
    "runner",
    "created_at",
    "started_at",
    "finished_at",
    "method",
]


async def load(conn: asyncpg.Connection, cfg: Config) -> None:
    rng = random.Random(cfg.seed)
    problems = await load_reference(conn, cfg, rng)
    hashes = [r["sha256"] for r in await conn.fetch("SELECT sha256 FROM sources")]
    for rows in submission_rows(cfg, rng, problems, hashes):
        await conn.copy_records_to_table("submissions", columns=SUBMISSION_COLUMNS, records=rows)
        jobs = [(r[0], r[0], r[9], "done", 1, r[16], r[16], r[18]) for r in rows]
        columns = ["id", "submission_id", "gpu_type", "state", "attempts", "created_at", "dispatched_at", "finished_at"]
        await conn.copy_records_to_table("jobs", columns=columns, records=jobs)
        print(f"  loaded {rows[-1][0]:,} submissions", file=sys.stderr)
    for table in ("users", "problems", "submissions", "jobs"):
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    invalid = rng.sample(range(1, cfg.submissions + 1), 500)
    await conn.executemany(
        "INSERT INTO invalidations (submission_id, reason) VALUES ($1, 'bench')", [(i,) for i in invalid]
    )
    await conn.execute(
        "UPDATE submissions SET invalidated = true WHERE id IN (SELECT submission_id FROM invalidations)"
    )
    banned = rng.sample(range(1, cfg.users + 1), 25)
    await conn.executemany("INSERT INTO bans (user_id, reason) VALUES ($1, 'bench')", [(u,) for u in banned])
    async with conn.transaction():
        entries = await leaderboard.rebuild(conn)
    print(f"  built {entries:,} leaderboard rows", file=sys.stderr)
    await conn.execute("VACUUM ANALYZE")


@dataclass(frozen=True)
class BoardRef:
    slug: str
    gpu: str
    dtype: str
    entries: int


async def boards(conn: asyncpg.Connection) -> list[BoardRef]:
    rows = await conn.fetch(
        """SELECT p.slug, e.gpu_type, e.dtype, count(*) AS n FROM leaderboard_entries e
        JOIN problems p ON p.id = e.problem_id AND p.current_version = e.problem_version
        WHERE e.language = 'any' GROUP BY 1, 2, 3 ORDER BY n DESC"""
    )
    return [BoardRef(r["slug"], r["gpu_type"], r["dtype"], r["n"]) for r in rows]


async def members(conn: asyncpg.Connection, board: BoardRef, k: int, rng: random.Random) -> list[str]:
    rows = await conn.fetch(
        """SELECT u.external_id FROM leaderboard_entries e JOIN problems p ON p.id = e.problem_id
        AND p.current_version = e.problem_version JOIN users u ON u.id = e.user_id
        WHERE p.slug = $1 AND e.gpu_type = $2 AND e.dtype = $3 AND e.language = 'any'""",
        board.slug,
        board.gpu,
        board.dtype,
    )
    return [rng.choice(rows)["external_id"] for _ in range(k)]


async def timed(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    for call in calls[:20]:  # warm-up: prepared statements and caches
        await call()
    samples = []
    for call in calls:
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def measure_queries(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> list[float]:
    """Time each query kind; returns their p95s in ms."""
    rng = random.Random(cfg.seed + 1)
    async with pool.acquire() as conn:
        all_boards = await boards(conn)
        top = all_boards[0]
        top_users = await members(conn, top, cfg.queries, rng)
        picks = [rng.choice(all_boards) for _ in range(cfg.queries)]
        pick_users = [(await members(conn, b, 1, rng))[0] for b in picks]
    sizes = sorted(b.entries for b in all_boards)
    out.append(
        f"boards: {len(all_boards)} at current versions; users per board: median {sizes[len(sizes) // 2]}, "
        f"max {sizes[-1]} ({top.slug} / {top.gpu} / {top.dtype})"
    )
    cases = {
        "top-20, fullest board ": [lambda: get_leaderboard(pool, top.slug, top.gpu, top.dtype)] * cfg.queries,
        "top-20, random boards ": [lambda b=b: get_leaderboard(pool, b.slug, b.gpu, b.dtype) for b in picks],
        "user rank, fullest    ": [lambda u=u: get_rank(pool, top.slug, top.gpu, top.dtype, u) for u in top_users],
        "user rank, random     ": [
            lambda b=b, u=u: get_rank(pool, b.slug, b.gpu, b.dtype, u) for b, u in zip(picks, pick_users, strict=True)
        ],
    }
    p95s = []
    for name, calls in cases.items():
        samples = await timed(calls)
        p95s.append(statistics.quantiles(samples, n=100, method="inclusive")[94])
        out.append(f"{name} ({cfg.queries} calls): {percentiles(samples)}")
    return p95s


async def measure_submits(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> float:
    """Submit `cfg.submits` times from concurrent callers; returns submits per second."""
    limits = RateLimitSettings()  # the defaults: every user here submits once
    rng = random.Random(cfg.seed + 2)
    allowed = [r["id"] for r in await pool.fetch("SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM bans)")]
    requests = []
    for i in range(cfg.submits):
        user = allowed[i % len(allowed)]
        source = f"// bench {i}\n{'y' * rng.randrange(100, 2000)}".encode()
        slug = f"problem-{rng.randrange(cfg.problems) + 1:02d}"
        gpu, dtype, mode = pick(rng, GPUS), pick(rng, DTYPES), pick(rng, MODES)
        requests.append(
            SubmitRequest(f"discord:{user}", f"user{user}", slug, check_upload("solution.cu", source), gpu, dtype, mode)
        )
    queue: asyncio.Queue[SubmitRequest] = asyncio.Queue()
    for r in requests:
        queue.put_nowait(r)
    latencies: list[float] = []

    async def worker() -> None:
        while not queue.empty():
            request = queue.get_nowait()
            start = time.perf_counter()
            await submit(pool, request, limits)
            latencies.append((time.perf_counter() - start) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(cfg.concurrency)))
    elapsed = time.perf_counter() - start
    rate = cfg.submits / elapsed
    callers = f"{cfg.concurrency} concurrent callers, pool of {pool.get_max_size()}"
    out.append(f"submit(): {cfg.submits} submits, {callers}: {rate:,.0f} submits/s; latency {percentiles(latencies)}")
    return rate


async def run(cfg: Config, out: list[str]) -> tuple[list[float], float]:
    settings = StoreSettings()
    tmp = None
    if settings.database_url is not None:
        admin_dsn, server = settings.database_url.get_secret_value(), None
    else:
        tmp = Path(tempfile.mkdtemp(prefix="arena-bench-"))
        server = await start_embedded(tmp / "pg")
        admin_dsn = server.dsn()
    try:
        admin = await asyncpg.connect(admin_dsn)
        await admin.execute("DROP DATABASE IF EXISTS arena_bench WITH (FORCE)")
        await admin.execute("CREATE DATABASE arena_bench")
        info = [await admin.fetchval(f"SHOW {s}") for s in ("server_version", "shared_buffers", "synchronous_commit")]
        await admin.close()
        out.append(
            f"server: PostgreSQL {info[0]} ({'embedded' if server else 'DATABASE_URL'}), "
            f"shared_buffers {info[1]}, synchronous_commit {info[2]}"
        )
        dsn = with_database(admin_dsn, "arena_bench")
        conn = await asyncpg.connect(dsn)
        try:
            await migrate(conn)
            start = time.perf_counter()
            await load(conn, cfg)
            size = await conn.fetchval("SELECT pg_size_pretty(pg_database_size(current_database()))")
            out.append(
                f"load: {cfg.submissions:,} submissions + jobs in {time.perf_counter() - start:.0f} s (COPY), "
                f"database {size}"
            )
        finally:
            await conn.close()
        async with create_pool(dsn, min_size=10, max_size=10, command_timeout=60) as pool:
            return await measure_queries(pool, cfg, out), await measure_submits(pool, cfg, out)
    finally:
        if server is not None:
            await server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=5_000)
    parser.add_argument("--problems", type=int, default=50)
    parser.add_argument("--sources", type=int, default=200_000, help="distinct source texts (deduplicated)")
    parser.add_argument("--queries", type=int, default=1_000, help="timed calls per query kind")
    parser.add_argument("--submits", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    cfg = Config(
        args.submissions,
        args.users,
        args.problems,
        args.sources,
        args.queries,
        args.submits,
        args.concurrency,
        args.seed,
    )
    out = [
        f"store_scale {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.machine()}, {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()}, asyncpg {asyncpg.__version__}",
        f"data: {cfg.submissions:,} submissions, {cfg.users:,} users, {cfg.problems} problems, "
        f"{cfg.sources:,} distinct sources, seed {cfg.seed}",
    ]
    p95s, rate = asyncio.run(run(cfg, out))
    met = max(p95s) <= 10.0 and rate >= 500
    out.append(
        f"goals: query p95 <= 10 ms (worst {max(p95s):.2f} ms), >= 500 submits/s ({rate:,.0f}): "
        f"{'met' if met else 'MISSED'}"
    )
    report = "\n".join(out) + "\n"
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
