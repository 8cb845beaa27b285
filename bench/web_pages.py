"""Web pages at scale: p50/p95 of every page over HTTP, one reader at a time and 300 at once.

    python bench/web_pages.py --submissions 1000000 --out bench/results/web_pages.txt
    python bench/web_pages.py --data-dir /tmp/arena-store-10m --reuse --out bench/results/web_pages_10m.txt

Without `--reuse` it seeds a fresh database (a new embedded server in a temporary directory, or DATABASE_URL when
set) with every built-in problem, registered as the bot registers them, then users, sources, submissions, their jobs
and their per-case rows, each table in one `INSERT ... SELECT FROM generate_series` inside PostgreSQL (nothing
crosses the wire), and builds the leaderboards with the core's own `leaderboard.rebuild`. On a 2-core machine
1,000,000 submissions (with 1,000,000 jobs, 3.6 million case rows and 613,000 board entries) took 140 s to seed.
It then adds contests through the core (`core.contests`): a one-day contest each week of the seeded span, each on
three of the ten busiest problems, frozen and rated by the core's freezer, and one contest still running.

With `--data-dir DIR --reuse` it measures the store `bench/store_10m.py` loaded in DIR (10 million submissions,
its contests and ratings) as it is: nothing is seeded, deleted or migrated.

The web app (`web.app.create_app`) is served by a child process, as `arena web` serves it, so that the client's
load is not counted as the server's time. Each page is timed computed on every request (nothing kept: what the first
reader and each background refresh cost), then as served by default (contest boards and rating pages kept 15 s,
whole pages 5 s for readers who have not signed in), one request at a time and then with 300 readers at once. The
pages: the problem list (whole and filtered), the busiest problem's default board, filtered by language on its
second page, and a page past its end, random ranked submissions, the contest list, the running contest's live
board, the largest frozen contest's board and its upsolve board, the rating table and its pages, random rated
players' pages and the page of the player on the most boards. Goal: p95 <= 200 ms for each. The machine load
(`uptime`) is recorded with the timings: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from aiohttp import ClientSession, TCPConnector
from aiohttp.test_utils import unused_port
from aiohttp.web import AppRunner, TCPSite

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
COMPUTED_BOARDS = 5
# The store bench/store_10m.py loads: its database and the file that says what it loaded.
STORE_DATABASE = "arena_10m"
STORE_STATE = "load_state.json"
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
    readers: int = 300
    rounds: int = 3
    only: str | None = None


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


def _serve(dsn: str, port: int, now: datetime, board_cache_s: float, ready: Any) -> None:
    """The web app in a process of its own, as `arena web` runs it, so that the load the client makes is not counted in
    the server's time (a client of 300 connections in the same process would share its one event loop)."""

    async def main() -> None:
        async with create_pool(dsn, min_size=2, max_size=10, command_timeout=60) as pool:
            app = create_app(WebSettings(board_cache_s=board_cache_s), pool, clock=lambda: now)
            runner = AppRunner(app, access_log=None)
            await runner.setup()
            await TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
            ready.set()
            await asyncio.Event().wait()

    asyncio.run(main())


@contextmanager
def served(dsn: str, now: datetime, board_cache_s: float = 15.0) -> Iterator[str]:
    """The base URL of the web app served by a child process over `dsn`, stopped on the way out."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    port = unused_port()
    child = context.Process(target=_serve, args=(dsn, port, now, board_cache_s, ready), daemon=True)
    child.start()
    try:
        if not ready.wait(120):
            raise SystemExit("the web app did not start within 120 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        child.terminate()
        child.join(10)


async def _pages(
    pool: asyncpg.Pool, cfg: Config, now: datetime, out: list[str]
) -> list[tuple[str, Callable[[int], str]]]:
    """The pages to time, with the ids they read picked from the store: the busiest problem's boards, random ranked
    submissions and rated players, the busiest player, the contest running at `now` and the largest frozen one."""
    busiest = await pool.fetchrow(
        "SELECT p.slug, z.entries FROM leaderboard_sizes z JOIN problems p ON p.id = z.problem_id "
        "AND p.current_version = z.problem_version WHERE z.language = 'any' ORDER BY z.entries DESC LIMIT 1"
    )
    # A sample of the table first: ordering 10 million rows at random to pick 200 takes seconds.
    picking = "SELECT id FROM submissions {} WHERE mode = 'ranked' AND status = 'passed' ORDER BY random() LIMIT $1"
    found = await pool.fetch(picking.format("TABLESAMPLE SYSTEM (1)"), cfg.requests)
    ranked = [r["id"] for r in found or await pool.fetch(picking.format(""), cfg.requests)]
    out.append(f"busiest problem: {busiest['slug']}, {busiest['entries']:,} entries on its fullest board")
    slug = busiest["slug"]
    picked = await pool.fetch("SELECT user_id FROM ratings ORDER BY random() LIMIT $1", cfg.requests)
    rated = [r["user_id"] for r in picked]
    heaviest = await pool.fetchval(
        "SELECT user_id FROM leaderboard_entries WHERE language = 'any' GROUP BY user_id ORDER BY count(*) DESC LIMIT 1"
    )
    largest = await pool.fetchval(
        "SELECT c.slug FROM contests c JOIN contest_standings s ON s.contest_id = c.id "
        "GROUP BY c.slug ORDER BY count(*) DESC LIMIT 1"
    )
    live = await pool.fetchval(
        "SELECT slug FROM contests WHERE starts_at <= $1 AND $1 < ends_at AND cancelled_at IS NULL "
        "ORDER BY starts_at DESC LIMIT 1",
        now,
    )
    return [
        ("/ (problem list)", lambda i: "/"),
        ("/?category=reduction&difficulty=easy", lambda i: "/?category=reduction&difficulty=easy"),
        (f"/problems/{slug} (default board)", lambda i: f"/problems/{slug}"),
        (f"/problems/{slug}?lang=cuda&page=2", lambda i: f"/problems/{slug}?lang=cuda&page=2"),
        (f"/problems/{slug}?page=40", lambda i: f"/problems/{slug}?page=40"),
        ("/submissions/<random ranked id>", lambda i: f"/submissions/{ranked[i % len(ranked)]}"),
        ("/contests", lambda i: "/contests"),
        (f"/contests/{live} (live board)", lambda i: f"/contests/{live}"),
        (f"/contests/{largest} (frozen board)", lambda i: f"/contests/{largest}"),
        (f"/contests/{largest}/upsolve", lambda i: f"/contests/{largest}/upsolve"),
        ("/ratings", lambda i: "/ratings"),
        ("/ratings?page=<random>", lambda i: f"/ratings?page={1 + i % max(1, len(rated) // 50)}"),
        ("/users/<random rated player>", lambda i: f"/users/{rated[i % len(rated)]}"),
        (f"/users/{heaviest} (on the most boards)", lambda i: f"/users/{heaviest}"),
    ]


async def _get(http: ClientSession, url: str) -> None:
    async with http.get(url) as response:
        await response.read()
        assert response.status == 200, (url, response.status)


async def concurrent(
    http: ClientSession, base: str, path: Callable[[int], str], readers: int, rounds: int
) -> list[float]:
    """Each request's time with `readers` requests in flight at once (all sent together, `rounds` times)."""
    samples: list[float] = []

    async def one(i: int) -> None:
        start = time.perf_counter()
        await _get(http, base + path(i))
        samples.append((time.perf_counter() - start) * 1000)

    for r in range(rounds):
        await asyncio.gather(*(one(r * readers + i) for i in range(readers)))
    return samples


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(sorted(samples), n=100, method="inclusive")[94]


async def measure(pool: asyncpg.Pool, dsn: str, cfg: Config, now: datetime, out: list[str]) -> float:
    """Time each page computed on every request, one request at a time; then as served (boards and pages kept),
    one at a time and with `cfg.readers` at once. Returns the worst p95 in ms."""
    pages = [p for p in await _pages(pool, cfg, now, out) if cfg.only is None or cfg.only in p[0]]
    chart = await _a_chart(pool) if cfg.only is None else None
    worst = 0.0
    out.append(f"load average as the measurements start: {_load()} (1, 5, 15 min)")
    # Every page computed on every request (ARENA_WEB_BOARD_CACHE_S=0: no kept board, rating page or page): what the
    # first reader of a page and each background refresh cost.
    # A contest board is computed ahead and kept (web/board_cache.py): computed here COMPUTED_BOARDS times only, as it
    # takes seconds at 10 million submissions; the goal is judged on the pages as served.
    out.append("computed on every request (nothing kept), one request at a time:")
    computed_worst = 0.0
    with served(dsn, now, board_cache_s=0) as base:
        async with ClientSession() as http:
            for label, path in pages:
                n = COMPUTED_BOARDS if label.startswith("/contests/") else cfg.requests
                await timed(1, lambda i, path=path: _get(http, base + path(i)))  # warm the connection, the caches
                samples = await timed(n, lambda i, path=path: _get(http, base + path(i)))
                if not label.startswith("/contests/"):
                    computed_worst = max(computed_worst, _p95(samples))
                out.append(f"  {label:<46} ({n} requests): {percentiles(samples)}")
            if chart is None:
                out.append(
                    "  (no timed case rows in this store: the boards' runtime column reads '-', a submission's page "
                    "has no case table, and no roofline chart is timed)"
                )
            else:
                url = f"{base}/submissions/{chart}/roofline.png"
                first = await timed(1, lambda i: _get(http, url))
                cached = await timed(20, lambda i: _get(http, url))
                out.append(f"  roofline PNG: first draw {first[0]:.0f} ms, then from memory {percentiles(cached)}")
    # As `arena web` serves by default: contest boards and rating pages kept 15 s, whole pages 5 s for readers who
    # have not signed in.
    with served(dsn, now) as base:
        async with ClientSession(connector=TCPConnector(limit=cfg.readers)) as http:
            out.append("as served (boards kept 15 s, pages 5 s), one request at a time:")
            for label, path in pages:
                await timed(3, lambda i, path=path: _get(http, base + path(i)))  # the first reader computes a board
                samples = await timed(cfg.requests, lambda i, path=path: _get(http, base + path(i)))
                worst = max(worst, _p95(samples))
                out.append(f"  {label:<46} ({cfg.requests} requests): {percentiles(samples)}")
            out.append(f"as served, {cfg.readers} readers at once, {cfg.rounds} rounds a page (load {_load()}):")
            for label, path in pages:
                started = time.perf_counter()
                samples = await concurrent(http, base, path, cfg.readers, cfg.rounds)
                rate = len(samples) / (time.perf_counter() - started)
                worst = max(worst, _p95(samples))
                out.append(f"  {label:<46} ({len(samples)} requests, {rate:5.0f}/s): {percentiles(samples)}")
    out.append(f"load average as the measurements end: {_load()} (1, 5, 15 min)")
    out.append(f"worst p95 of a page computed on every request, contest boards aside: {computed_worst:.1f} ms")
    return worst


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def _a_chart(pool: asyncpg.Pool) -> int | None:
    """A ranked submission that passed and timed something (a roofline chart can be drawn for it)."""
    # From the case rows: a store loaded without them (bench/store_10m.py's) answers at once, with none.
    found = await pool.fetchval(
        "SELECT s.id FROM case_results c JOIN jobs j ON j.id = c.job_id "
        "JOIN submissions s ON s.id = j.submission_id AND s.result_job_id = j.id "
        "WHERE c.kind = 'benchmark' AND s.mode = 'ranked' AND s.status = 'passed' LIMIT 1"
    )
    return None if found is None else int(found)


async def reuse(data_dir: Path, cfg: Config, out: list[str]) -> float:
    """Measure the store `bench/store_10m.py` loaded in `data_dir`, as it is: nothing is seeded, deleted or migrated
    (other benches share it; the anonymous pages read nothing that later migrations added, and the report names the
    store's last migration). The pages are read as of an hour after the end of its timeline, when its frozen contests
    are frozen and its open one runs."""
    state = json.loads((data_dir / STORE_STATE).read_text(encoding="utf-8"))
    now = datetime.fromisoformat(state["end"]) + timedelta(hours=1)
    server = await start_embedded(data_dir / "pg")
    try:
        dsn = server.dsn(STORE_DATABASE)
        conn = await asyncpg.connect(dsn)
        try:
            counts = await conn.fetchrow(
                """SELECT (SELECT count(*) FROM submissions) AS submissions, (SELECT count(*) FROM users) AS users,
                (SELECT count(*) FROM leaderboard_entries) AS entries, (SELECT count(*) FROM ratings) AS rated,
                (SELECT count(*) FROM contests) AS contests, (SELECT count(*) FROM problems) AS problems,
                pg_size_pretty(pg_database_size(current_database())) AS size, current_setting('server_version') AS v,
                current_setting('shared_buffers') AS buffers,
                (SELECT max(version) FROM schema_migrations) AS migration"""
            )
        finally:
            await conn.close()
        out.append(
            f"server: PostgreSQL {counts['v']} (embedded, {data_dir}, reused, schema at V{counts['migration']}), "
            f"shared_buffers {counts['buffers']}"
        )
        out.append(
            f"store: {counts['submissions']:,} submissions, {counts['users']:,} users, {counts['problems']} problems, "
            f"{counts['entries']:,} board rows, {counts['contests']} contests, {counts['rated']:,} rated users; "
            f"database {counts['size']}; pages read as of {now:%Y-%m-%d %H:%M} UTC"
        )
        async with create_pool(dsn, min_size=1, max_size=4, command_timeout=120) as pool:
            return await measure(pool, dsn, cfg, now, out)
    finally:
        await server.stop()


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
            return await measure(pool, dsn, cfg, NOW, out)
    finally:
        if server is not None:
            await server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _uptime() -> str:
    """What `uptime` says: the machine is shared, and its load says how far the timings are the app's own."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


class Report(list[str]):
    """The report's lines, each also printed as it comes: a run at 10 million rows takes many minutes."""

    def append(self, line: str) -> None:
        print(line, flush=True)
        super().append(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=5_000)
    parser.add_argument("--sources", type=int, default=100_000, help="distinct source texts")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per page")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--readers", type=int, default=300, help="concurrent readers of each page")
    parser.add_argument("--rounds", type=int, default=3, help="times the readers read each page at once")
    parser.add_argument(
        "--data-dir", type=Path, help="with --reuse: the store bench/store_10m.py loaded there, measured as it is"
    )
    parser.add_argument("--reuse", action="store_true", help="measure the store in --data-dir; seed nothing")
    parser.add_argument("--only", help="time only the pages whose label contains this text")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    if args.reuse != (args.data_dir is not None):
        parser.error("--reuse and --data-dir go together")
    cfg = Config(
        args.submissions, args.users, args.sources, args.requests, args.seed, args.readers, args.rounds, args.only
    )
    random.seed(cfg.seed)
    out = Report()
    out.append(
        f"web_pages {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.machine()}, {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()}, asyncpg {asyncpg.__version__}"
    )
    out.append(f"uptime: {_uptime()}")
    if args.reuse:
        worst = asyncio.run(reuse(args.data_dir, cfg, out))
    else:
        out.append(
            f"data: {cfg.submissions:,} submissions, {cfg.users:,} users, {cfg.sources:,} distinct sources, "
            f"{len(builtin_problems())} built-in problems, seed {cfg.seed}"
        )
        worst = asyncio.run(run(cfg, out))
    out.append(
        f"goal: every page p95 < {GOAL_MS:.0f} ms (worst {worst:.1f} ms): {'met' if worst < GOAL_MS else 'MISSED'}"
    )
    report = "\n".join(out)
    if args.out is not None:
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0 if worst < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
