"""Web leaderboard pages at scale: p50/p95 of `/`, a problem's board and a submission's page, over HTTP.

    python bench/web_pages.py --submissions 1000000 --out bench/results/web_pages.txt

Seeds a fresh database (a new embedded server in a temporary directory, or DATABASE_URL when set) with every
built-in problem, registered as the bot registers them, then users, sources, submissions, their jobs and their
per-case rows, each table in one `INSERT ... SELECT FROM generate_series` inside PostgreSQL (nothing crosses the
wire), and builds the leaderboards with the core's own `leaderboard.rebuild`. On a 2-core machine 1,000,000
submissions (with 1,000,000 jobs, 3.6 million case rows and 613,000 board entries) took 140 s to seed, and the
whole run under 4 minutes (bench/results/web_pages.txt, its `load:` line).

It then adds contests through the core (`core.contests`): a one-day contest each week of the seeded span, each on
three of the ten busiest problems, frozen and rated by the core's freezer, and one contest still running on four
weeks of submissions.

Then it serves the web app (`web.app.create_app`) on a loopback port and times whole requests made with an HTTP
client, rendering included: the problem list, the default board of the busiest problem, that board filtered by
language and on its second page, the pages of random ranked submissions, the contest list, the running contest's
live board, the largest frozen contest's board and its upsolve board, the rating table and random players' pages.
Goal: p95 < 200 ms for each. Contest boards are kept for ARENA_WEB_BOARD_CACHE_S (web/board_cache.py); the same
three contest pages are also timed computed on every request, which is what the first reader of a board and each
background refresh cost.
The results are in bench/results/web_pages.txt.
"""

from __future__ import annotations

import argparse
import asyncio
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
from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.contests import ContestDraft, GpuCatalog, create_contest, freeze_if_due  # noqa: E402
from core.moderation import Actor  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.settings import StoreSettings  # noqa: E402
from core.store import leaderboard  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool, with_database  # noqa: E402
from problems.registry import builtin_problems  # noqa: E402
from runner.gpus import GPU_MODELS  # noqa: E402
from web.app import create_app  # noqa: E402
from web.settings import WebSettings  # noqa: E402

GOAL_MS = 200.0
COLD_REQUESTS = 20
# The seeded submissions run from 2026-05-01 over 180 days. A one-day contest each week covers that span (frozen and
# rated by the core's own freezer; a day's entrants are some hundreds, a size the all-pairs rating is meant for); one
# contest is still running, on four weeks of submissions, so its board is computed live from them, as during a round.
TIMELINE_START = datetime(2026, 5, 1, tzinfo=UTC)
PAST_CONTESTS = 24
LIVE_START = datetime(2026, 10, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 25, tzinfo=UTC)
MODERATOR = Actor("bench:moderator", "bench moderator")
GPUS = GpuCatalog.of(GPU_MODELS)


@dataclass(frozen=True)
class Config:
    submissions: int
    users: int
    sources: int
    requests: int
    seed: int


# Each statement fills one table from generate_series; `$n` are the Config's sizes. Problems are weighted by a
# power law (the first few are busy), users by another, modes 60 % ranked / 25 % benchmark / 15 % test, verdicts
# 80 % passed / 15 % failed / 5 % error; scores spread lognormally around a per-problem base.
_USERS = """
INSERT INTO users (external_id, display_name)
SELECT 'discord:' || g, 'user' || g FROM generate_series(1, $1) g
"""
_SOURCES = """
INSERT INTO sources (sha256, body, size_bytes)
SELECT sha256(convert_to(body, 'UTF8')), body, length(body)
FROM (SELECT '// solution ' || g || E'\\n' || repeat('x', 200) AS body FROM generate_series(1, $1) g) s
"""
_SUBMISSIONS = """
WITH p AS (
    SELECT row_number() OVER (ORDER BY p.id) - 1 AS n, p.id, p.current_version, v.dtypes, v.score_metric
    FROM problems p JOIN problem_versions v ON v.problem_id = p.id AND v.version = p.current_version
), src AS (SELECT row_number() OVER (ORDER BY sha256) AS n, sha256 FROM sources),
draw AS (
    SELECT g, random() AS r_problem, random() AS r_user, random() AS r_lang, random() AS r_mode,
           random() AS r_status, random() AS r_gpu, random() AS r_dtype, random() AS r_score,
           1 + floor(random() * $3)::bigint AS source_n
    FROM generate_series(1, $1) g
)
INSERT INTO submissions (id, user_id, problem_id, problem_version, source_sha256, file_name, language, dtype, mode,
                         gpu_type, status, score, mean_score, score_metric, device, runner, error_code,
                         error_message, result_job_id, created_at, started_at, finished_at, method,
                         geomean_gflops, mean_gflops, geomean_gbps, mean_gbps)
OVERRIDING SYSTEM VALUE
SELECT d.g, 1 + floor(power(d.r_user, 2) * $2)::bigint, p.id, p.current_version, src.sha256,
       CASE WHEN d.r_lang < 0.5 THEN 'solution.cu' ELSE 'solution.py' END,
       CASE WHEN d.r_lang < 0.5 THEN 'cuda' WHEN d.r_lang < 0.8 THEN 'triton' ELSE 'python' END,
       p.dtypes[1 + floor(power(d.r_dtype, 2) * cardinality(p.dtypes))::int],
       CASE WHEN d.r_mode < 0.6 THEN 'ranked' WHEN d.r_mode < 0.85 THEN 'benchmark' ELSE 'test' END,
       CASE WHEN d.r_gpu < 0.7 THEN 'h100' ELSE 'h200' END,
       x.status, x.score, x.score, p.score_metric, 'NVIDIA H100 80GB HBM3', 'bench-runner',
       CASE x.status WHEN 'failed' THEN 'wrong_answer' WHEN 'error' THEN 'compile_error' END,
       CASE x.status WHEN 'failed' THEN 'Wrong answer on case 1' WHEN 'error' THEN 'nvcc failed' END,
       d.g, t.at, t.at, t.at + interval '20 seconds', CASE WHEN x.score IS NOT NULL THEN 'arena' END,
       CASE WHEN p.score_metric = 'gflops' THEN x.score END, CASE WHEN p.score_metric = 'gflops' THEN x.score END,
       CASE WHEN p.score_metric = 'gbps' THEN x.score END, CASE WHEN p.score_metric = 'gbps' THEN x.score END
FROM draw d
JOIN p ON p.n = floor(power(d.r_problem, 3) * (SELECT count(*) FROM p))::bigint
JOIN src ON src.n = d.source_n
CROSS JOIN LATERAL (SELECT timestamptz '2026-05-01' + (d.g * interval '180 days') / $1 AS at) t
CROSS JOIN LATERAL (
    SELECT s.status, CASE WHEN s.status = 'passed' THEN (100 + (p.n * 37) % 900) * exp(d.r_score * 2) END AS score
    FROM (SELECT CASE WHEN d.r_status < 0.8 THEN 'passed' WHEN d.r_status < 0.95 THEN 'failed' ELSE 'error' END
          AS status) s
) x
"""
_JOBS = """
INSERT INTO jobs (id, submission_id, gpu_type, state, attempts, runner, created_at, started_at, finished_at)
OVERRIDING SYSTEM VALUE
SELECT id, id, gpu_type, 'done', 1, 'bench-runner', created_at, started_at, finished_at FROM submissions
"""
# Two test verdicts and two timed cases per job: what a result page reads back.
_CASES = """
INSERT INTO case_results (job_id, kind, idx, name, dims, passed, message, method, runtime_median_us,
                          runtime_mean_us, gflops, gflops_mean, gbps, flops, bytes, samples, cv, converged,
                          dropped_samples, host_waits)
SELECT s.id, k.kind, i.idx, 'n=' || (1000 << (i.idx * 4)), ARRAY[1000 << (i.idx * 4)]::bigint[],
       CASE WHEN k.kind = 'test' THEN s.status = 'passed' END, CASE WHEN k.kind = 'test' THEN 'ok' END,
       CASE WHEN k.kind = 'benchmark' THEN 'arena' END,
       c.us, c.us * 1.05, c.gflops, c.gflops * 0.95, c.gflops * 12, c.flops, c.flops * 12,
       CASE WHEN k.kind = 'benchmark' THEN 40 END, CASE WHEN k.kind = 'benchmark' THEN 0.01 END,
       CASE WHEN k.kind = 'benchmark' THEN true END, 0, false
FROM submissions s
CROSS JOIN (VALUES ('test'), ('benchmark')) k(kind)
CROSS JOIN generate_series(0, 1) i(idx)
CROSS JOIN LATERAL (
    SELECT (1000::bigint << (i.idx * 4)) AS flops,
           CASE WHEN k.kind = 'benchmark' THEN coalesce(s.score, 100) END AS gflops,
           CASE WHEN k.kind = 'benchmark' THEN (1000::bigint << (i.idx * 4)) / coalesce(s.score, 100) / 1e3 END AS us
) c
WHERE s.status = 'passed' OR k.kind = 'test'
"""


async def seed(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> None:
    start = time.perf_counter()
    for problem in builtin_problems().values():
        await sync_problem(pool, ProblemSpec.builtin(problem))  # type: ignore[arg-type]
    async with pool.acquire() as conn:
        await _fill(conn, cfg, out, start)
    await _contests(pool, out)


async def _busiest(pool: asyncpg.Pool, n: int) -> list[str]:
    rows = await pool.fetch(
        "SELECT p.slug FROM submissions s JOIN problems p ON p.id = s.problem_id WHERE s.mode = 'ranked' "
        "GROUP BY p.slug ORDER BY count(*) DESC LIMIT $1",
        n,
    )
    return [r["slug"] for r in rows]


async def _contests(pool: asyncpg.Pool, out: list[str]) -> None:
    """A one-day contest each week of the seeded span, each on three of the ten busiest problems (h100 and h200,
    float32), created, frozen and rated through `core.contests`; then one that is still running."""
    start = time.perf_counter()
    busy = await _busiest(pool, 10)
    targets = (("h100", "float32"), ("h200", "float32"))
    for i in range(PAST_CONTESTS):
        begins = TIMELINE_START + timedelta(days=7 * i)
        problems = tuple(busy[(i + k) % len(busy)] for k in range(3))
        draft = ContestDraft(f"week-{i + 1}", f"Week {i + 1}", begins, begins + timedelta(days=1), problems, targets)
        await create_contest(pool, MODERATOR, draft, now=begins - timedelta(days=1), gpus=GPUS)
    created = time.perf_counter()
    report = await freeze_if_due(pool, NOW)
    frozen = time.perf_counter()
    live = ContestDraft("autumn-open", "Autumn open", LIVE_START, NOW + timedelta(days=60), tuple(busy[:3]), targets)
    await create_contest(pool, MODERATOR, live, now=LIVE_START - timedelta(days=1), gpus=GPUS)
    rated = await pool.fetchrow("SELECT count(*) AS n, min(rating) AS low, max(rating) AS high FROM ratings")
    sizes = [len(f.board.lines) for f in report.frozen]
    out.append(
        f"contests: {PAST_CONTESTS} one-day contests created in {created - start:.1f} s, {len(sizes)} frozen and rated "
        f"in {frozen - created:.1f} s ({min(sizes, default=0):,} to {max(sizes, default=0):,} entrants; "
        f"{rated['n']:,} rated users, ratings {rated['low'] or 0:.0f} to {rated['high'] or 0:.0f}); one running since "
        f"{LIVE_START:%Y-%m-%d} on {', '.join(busy[:3])}"
    )


async def _fill(conn: asyncpg.Connection, cfg: Config, out: list[str], start: float) -> None:
    await conn.execute("SELECT setseed($1)", (cfg.seed % 1000) / 1000)
    await conn.execute(_USERS, cfg.users)
    await conn.execute(_SOURCES, cfg.sources)
    steps: list[str] = []
    async with conn.transaction():
        # The submission and its job point at each other: the row pairs are written with the same ids, and the
        # submission's foreign key to its job is checked again, in full, once both tables are filled.
        await conn.execute("ALTER TABLE submissions DROP CONSTRAINT submissions_result_job_fkey")
        for name, sql, args in (
            ("submissions", _SUBMISSIONS, (cfg.submissions, cfg.users, cfg.sources)),
            ("jobs", _JOBS, ()),
            ("case rows", _CASES, ()),
        ):
            t = time.perf_counter()
            status = await conn.execute(sql, *args)
            steps.append(f"{name} {int(status.rsplit(' ', 1)[1]):,} in {time.perf_counter() - t:.0f} s")
        await conn.execute(
            "ALTER TABLE submissions ADD CONSTRAINT submissions_result_job_fkey "
            "FOREIGN KEY (result_job_id) REFERENCES jobs (id)"
        )
        for table in ("submissions", "jobs"):
            await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    t = time.perf_counter()
    async with conn.transaction():
        entries = await leaderboard.rebuild(conn)
    steps.append(f"leaderboard entries {entries:,} in {time.perf_counter() - t:.0f} s")
    await conn.execute("ANALYZE")
    size = await conn.fetchval("SELECT pg_size_pretty(pg_database_size(current_database()))")
    out.append(f"load: {time.perf_counter() - start:.0f} s in all ({'; '.join(steps)}), database {size}")


def percentiles(samples: list[float]) -> str:
    q = statistics.quantiles(sorted(samples), n=100, method="inclusive")
    return f"p50 {q[49]:7.2f} ms   p95 {q[94]:7.2f} ms   max {max(samples):7.2f} ms"


async def timed(n: int, fetch: Callable[[int], Awaitable[None]]) -> list[float]:
    samples = []
    for i in range(n):
        start = time.perf_counter()
        await fetch(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def measure(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> float:
    """Time each page; returns the worst p95 in ms."""
    busiest = await pool.fetchrow(
        "SELECT p.slug, count(*) AS entries FROM leaderboard_entries e JOIN problems p ON p.id = e.problem_id "
        "WHERE e.language = 'any' GROUP BY p.slug ORDER BY entries DESC LIMIT 1"
    )
    ranked = [
        r["id"]
        for r in await pool.fetch(
            "SELECT id FROM submissions WHERE mode = 'ranked' AND status = 'passed' ORDER BY random() LIMIT $1",
            cfg.requests,
        )
    ]
    out.append(f"busiest problem: {busiest['slug']}, {busiest['entries']:,} board entries over its boards")
    slug = busiest["slug"]
    picked = await pool.fetch("SELECT user_id FROM ratings ORDER BY random() LIMIT $1", cfg.requests)
    rated = [r["user_id"] for r in picked]
    largest = await pool.fetchval(
        "SELECT c.slug FROM contests c JOIN contest_standings s ON s.contest_id = c.id "
        "GROUP BY c.slug ORDER BY count(*) DESC LIMIT 1"
    )
    pages: list[tuple[str, Callable[[int], str]]] = [
        ("/ (problem list)", lambda i: "/"),
        (f"/problems/{slug} (default board)", lambda i: f"/problems/{slug}"),
        (f"/problems/{slug}?lang=cuda&page=2", lambda i: f"/problems/{slug}?lang=cuda&page=2"),
        ("/submissions/<random ranked id>", lambda i: f"/submissions/{ranked[i % len(ranked)]}"),
        ("/contests", lambda i: "/contests"),
        ("/contests/autumn-open (live board)", lambda i: "/contests/autumn-open"),
        (f"/contests/{largest} (frozen board)", lambda i: f"/contests/{largest}"),
        (f"/contests/{largest}/upsolve", lambda i: f"/contests/{largest}/upsolve"),
        ("/ratings", lambda i: "/ratings"),
        ("/users/<random rated player>", lambda i: f"/users/{rated[i % len(rated)]}"),
    ]
    app = create_app(WebSettings(), pool, clock=lambda: NOW)
    worst = 0.0
    async with TestServer(app, host="127.0.0.1") as server, ClientSession() as http:

        async def get(path: str) -> None:
            async with http.get(server.make_url(path)) as response:
                await response.read()
                assert response.status == 200, (path, response.status)

        for label, path in pages:
            await timed(5, lambda i, path=path: get(path(i)))  # warm the connection, the statement caches
            samples = await timed(cfg.requests, lambda i, path=path: get(path(i)))
            worst = max(worst, statistics.quantiles(sorted(samples), n=100, method="inclusive")[94])
            out.append(f"{label:<48} ({cfg.requests} requests): {percentiles(samples)}")
        chart = f"/submissions/{ranked[0]}/roofline.png"
        first = await timed(1, lambda i: get(chart))
        cached = await timed(20, lambda i: get(chart))
        out.append(f"roofline PNG: first draw {first[0]:.0f} ms, then from memory {percentiles(cached)}")
    # What the kept boards save: the same contest pages computed on every request (ARENA_WEB_BOARD_CACHE_S=0), as the
    # first reader of a board and each background refresh compute them.
    uncached = create_app(WebSettings(board_cache_s=0), pool, clock=lambda: NOW)
    async with TestServer(uncached, host="127.0.0.1") as server, ClientSession() as http:
        for label, path in pages[5:8]:

            async def fetch(i: int, path: Callable[[int], str] = path) -> None:
                async with http.get(server.make_url(path(i))) as response:
                    await response.read()

            samples = await timed(COLD_REQUESTS, fetch)
            out.append(f"{label + ', computed':<48} ({COLD_REQUESTS} requests): {percentiles(samples)}")
    return worst


async def run(cfg: Config, out: list[str]) -> float:
    settings = StoreSettings()
    tmp, server = None, None
    if settings.database_url is not None:
        admin_dsn = settings.database_url.get_secret_value()
    else:
        tmp = Path(tempfile.mkdtemp(prefix="arena-web-bench-"))
        server = await start_embedded(tmp / "pg")
        admin_dsn = server.dsn()
    try:
        admin = await asyncpg.connect(admin_dsn)
        await admin.execute("DROP DATABASE IF EXISTS arena_web_bench WITH (FORCE)")
        await admin.execute("CREATE DATABASE arena_web_bench")
        info = [await admin.fetchval(f"SHOW {s}") for s in ("server_version", "shared_buffers")]
        await admin.close()
        out.append(
            f"server: PostgreSQL {info[0]} ({'embedded' if server else 'DATABASE_URL'}), shared_buffers {info[1]}"
        )
        dsn = with_database(admin_dsn, "arena_web_bench")
        conn = await asyncpg.connect(dsn)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        # Seeding statements run for minutes at 1M submissions: no per-statement timeout while seeding.
        async with create_pool(dsn, min_size=1, max_size=2, command_timeout=3600) as pool:
            await seed(pool, cfg, out)
        async with create_pool(dsn, min_size=2, max_size=10, command_timeout=60) as pool:
            return await measure(pool, cfg, out)
    finally:
        if server is not None:
            await server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=5_000)
    parser.add_argument("--sources", type=int, default=100_000, help="distinct source texts")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per page")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    cfg = Config(args.submissions, args.users, args.sources, args.requests, args.seed)
    random.seed(cfg.seed)
    out = [
        f"web_pages {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.machine()}, {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()}, asyncpg {asyncpg.__version__}",
        f"data: {cfg.submissions:,} submissions, {cfg.users:,} users, {cfg.sources:,} distinct sources, "
        f"{len(builtin_problems())} built-in problems, seed {cfg.seed}",
    ]
    worst = asyncio.run(run(cfg, out))
    out.append(
        f"goal: every page p95 < {GOAL_MS:.0f} ms (worst {worst:.1f} ms): {'met' if worst < GOAL_MS else 'MISSED'}"
    )
    report = "\n".join(out)
    print(report)
    if args.out is not None:
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0 if worst < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
