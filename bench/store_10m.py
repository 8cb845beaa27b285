"""The store at 10 million submissions: boards, ranks, the web pages and the submit path, measured.

    python bench/store_10m.py --data-dir /tmp/arena-store-10m --out bench/results/store_10m.txt
    python bench/store_10m.py --data-dir /tmp/arena-store-10m --reuse      # measure again, or finish a load
    python bench/store_10m.py --data-dir /tmp/arena-10m-small --submissions 200000   # a quick check
    python bench/store_10m.py --data-dir /tmp/arena-store-10m --reuse --submit-only --paths service --repeat 5

Loads, in bulk and inside PostgreSQL (`INSERT ... SELECT FROM generate_series`, nothing crosses the wire), an
embedded server in `--data-dir` migrated with the project's migrations:
- 100 of the built-in problems, registered as the bot registers them (`core.problems.sync_problem`): every one with
  three dtypes, the one with two, and float32-only ones to make up the hundred;
- 50,000 users; 20,000 distinct source texts (sources are stored once per SHA-256, as the submit path stores them);
- 10,000,000 submissions over a year, each with its finished job: problems and users drawn Zipf-like (a few popular
  problems, a few heavy users: the top 1 % of users send about 45 % of the submissions), 4 GPU pools (h100 40 %,
  h200 25 %, a100 20 %, l4 15 %), each problem's dtypes (float32 first), modes 38 % test, 36 % benchmark,
  25 % ranked, 1 % profile; 74 % passed, 18 % failed, 8 % error; 5 % of the timed runs by the seed's method;
- a few bans and invalidations, then the boards written by the store's own `leaderboard.rebuild` (the rows that
  `refresh_user` would have left after each result), then contests created, frozen and rated by the core's own
  `core.contests` (one-day contests every four weeks, and one still running).

Not loaded: `case_results` (a job's per-case rows, read by a submission's page and its chart by the job's primary
key, whose cost does not grow with the table) and `job_transitions` (the audit trail of each job's states, which
no board, page or submit reads): together about 70 million rows that would triple the load's time and size.

The secondary indexes and foreign keys of `submissions` and `jobs` are dropped while the rows go in and created
again afterwards from the definitions the migrations gave them (checked to be the same set); the load commits every
1,000,000 submissions and `--reuse` resumes an interrupted load where it stopped (the state is in
`<data-dir>/load_state.json`). Then it times, through the functions the bot, the CLI and the web call:
- a board's top 20 (`core.leaderboard.get_leaderboard`, and `core.browse.leaderboard_page` with the caller's
  own row, as the bot's `/leaderboard` reads it) and a user's rank (`core.leaderboard.get_rank`), p50/p95/p99;
- the web pages (`web.app.create_app` on a loopback port, whole HTTP requests with rendering);
- `core.submit.service.ArenaService.submit` (what the bot's `/submit` and the API do before they answer: the checks, the
  rate limit, the insert, the job's place in the fair queue with the dispatchers' wake-up, the user's rank before a
  ranked run, and the start estimate; concurrent requests stored in batches, `core.submit.batch`) from concurrent
  callers, and `core.submit.intake.submit` alone (the store's part, one request a statement; the CLI's path):
  submissions a second, and the batches' sizes. The submissions it adds are deleted afterwards, so a reused store
  measures the same; the queue they leave behind grows to --submits jobs, a burst no runner drains.
Goals on a 2-core machine: board queries p95 <= 5 ms, web pages p95 <= 200 ms, submit >= 1,000/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cpu import processes, tree_cpu_s  # noqa: E402
from core.browse import leaderboard_page  # noqa: E402
from core.contests import ContestDraft, GpuCatalog, create_contest, freeze_if_due  # noqa: E402
from core.errors import MigrationError  # noqa: E402
from core.leaderboard import get_leaderboard, get_rank  # noqa: E402
from core.moderation import Actor  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.settings import RateLimitSettings, Settings  # noqa: E402
from core.store import leaderboard  # noqa: E402
from core.store.embedded import EmbeddedPostgres, start_embedded  # noqa: E402
from core.store.migrate import discover, migrate  # noqa: E402
from core.store.pool import create_pool  # noqa: E402
from core.submit.intake import SubmitRequest, submit  # noqa: E402
from core.submit.service import ArenaService  # noqa: E402
from core.submit.uploads import check_upload  # noqa: E402
from problems.registry import builtin_problems  # noqa: E402
from runner.gpus import GPU_MODELS  # noqa: E402
from web.app import create_app  # noqa: E402
from web.settings import WebSettings  # noqa: E402

DATABASE = "arena_10m"
STATE_FILE = "load_state.json"
CHUNK = 1_000_000
SPAN = timedelta(days=365)
CONTEST_EVERY = timedelta(days=28)
BOARD_GOAL_MS, PAGE_GOAL_MS, SUBMIT_GOAL = 5.0, 200.0, 1000.0
MODERATOR = Actor("bench:moderator", "bench moderator")
GPUS = GpuCatalog.of(GPU_MODELS)
# The four GPU pools and their share of submissions; a pool's speed scales its scores. Contests run on the pools
# the GPU registry knows (h100, h200): a contest's targets must be GPU types it can name.
POOLS = (("h100", 0.40, 1.0, "NVIDIA H100 80GB HBM3"), ("h200", 0.25, 1.25, "NVIDIA H200"),
         ("a100", 0.20, 0.6, "NVIDIA A100-SXM4-80GB"), ("l4", 0.15, 0.25, "NVIDIA L4"))  # fmt: skip
CONTEST_TARGETS = (("h100", "float32"), ("h200", "float32"))
# Zipf-Mandelbrot draws: rank k has weight 1/(k + q); the offset q keeps the heaviest from taking everything.
USER_Q, PROBLEM_Q = 10.0, 2.0
# A bijection of user ranks onto ids (7919 is prime to 50,000 and to most sizes): heavy users are not ids 1, 2, 3.
USER_STRIDE = 7919


@dataclass(frozen=True)
class Config:
    submissions: int
    users: int
    problems: int
    sources: int
    seed: int


@dataclass
class LoadState:
    """What is loaded in the data directory; written after each step, so that `--reuse` goes on from there."""

    config: dict[str, int]
    end: str  # the timeline's end (ISO): the last submission's time, and the moment the pages are read at
    reference: bool = False
    loaded: int = 0  # submissions (and their jobs) committed
    dropped: list[tuple[str, str, str]] | None = None  # (kind, name, definition) taken off for the load
    schema: list[str] | None = None  # the migrated definitions of those tables' keys and indexes, to compare
    indexed: bool = False
    boards: bool = False
    contests: bool = False

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> LoadState:
        return cls(**json.loads(path.read_text(encoding="utf-8")))


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def note(out: list[str], line: str) -> None:
    """A line of the report, shown as soon as it is measured."""
    out.append(line)
    log(line)


# -- loading ----------------------------------------------------------------------------------------------------


def chosen_problems(cfg: Config) -> list[ProblemSpec]:
    """`cfg.problems` built-in problems, in popularity order: those with several dtypes first, then float32-only
    ones drawn with the seed; the popularity order is drawn too."""
    specs = sorted((ProblemSpec.builtin(p) for p in builtin_problems().values()), key=lambda s: s.slug)
    rng = random.Random(cfg.seed)
    several = [s for s in specs if len(s.dtypes) > 1]
    single = [s for s in specs if len(s.dtypes) == 1]
    picked = (several + rng.sample(single, max(0, cfg.problems - len(several))))[: cfg.problems]
    rng.shuffle(picked)
    return picked


async def load_reference(pool: asyncpg.Pool, cfg: Config) -> None:
    for spec in chosen_problems(cfg):
        await sync_problem(pool, spec)
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO users (id, external_id, display_name) OVERRIDING SYSTEM VALUE "
            "SELECT g, 'discord:' || (100000000000000000 + g), 'user' || g FROM generate_series(1, $1) g",
            cfg.users,
        )
        await conn.execute("SELECT setval(pg_get_serial_sequence('users', 'id'), $1)", cfg.users)
        # Source texts of 0.5 to 6 KB, each distinct (a line with its number), the bulk of it varied text.
        await conn.execute(
            """INSERT INTO sources (sha256, body, size_bytes)
            SELECT sha256(convert_to(body, 'UTF8')), body, octet_length(body)
            FROM (SELECT '// solution ' || g || E'\\n' || string_agg(md5((g * 131 + k)::text), E'\\n') AS body
                  FROM generate_series(1, $1) g, generate_series(1, 15 + (g * 7) % 170) k GROUP BY g) s""",
            cfg.sources,
        )


async def bench_tables(conn: asyncpg.Connection, cfg: Config) -> None:
    """This connection's temporary tables that the load's statements draw from: problems by popularity rank,
    sources by number."""
    order = [s.slug for s in chosen_problems(cfg)]
    await conn.execute(
        "CREATE TEMP TABLE bench_problems (n int, problem_id bigint, version int, dtypes text[], score_metric text, "
        "base float8) ON COMMIT PRESERVE ROWS"
    )
    await conn.execute(
        """INSERT INTO bench_problems
        SELECT o.n - 1 AS n, p.id AS problem_id, p.current_version AS version, v.dtypes, v.score_metric,
               -- a base score per problem, 50 to 5000 (GFLOPS or GB/s)
               50 * power(100, ((o.n * 37) % 101) / 100.0) AS base
        FROM unnest($1::text[]) WITH ORDINALITY AS o(slug, n)
        JOIN problems p ON p.slug = o.slug JOIN problem_versions v ON v.problem_id = p.id
         AND v.version = p.current_version""",
        order,
    )
    await conn.execute(
        "CREATE TEMP TABLE bench_sources ON COMMIT PRESERVE ROWS AS "
        "SELECT row_number() OVER (ORDER BY sha256) AS n, sha256 FROM sources"
    )
    await conn.execute(
        "CREATE TEMP TABLE bench_pools (pool text, lo float8, hi float8, speed float8, device text) "
        "ON COMMIT PRESERVE ROWS"
    )
    lo, rows = 0.0, []
    for name, share, speed, device in POOLS:
        rows.append((name, lo, lo + share, speed, device))
        lo += share
    await conn.executemany("INSERT INTO bench_pools VALUES ($1, $2, $3, $4, $5)", rows)
    await conn.execute("ANALYZE bench_problems; ANALYZE bench_sources; ANALYZE bench_pools")


# One chunk of submissions, ids $1..$2 of $3 over the year before $8. $4 users, $5 problems, $6 sources.
_SUBMISSIONS = f"""
WITH draw AS (
    SELECT g, random() AS r_user, random() AS r_problem, random() AS r_lang, random() AS r_mode,
           random() AS r_status, random() AS r_pool, random() AS r_dtype, random() AS r_score,
           random() AS r_method, 1 + floor(random() * $6)::bigint AS source_n
    FROM generate_series($1::bigint, $2::bigint) g
), d AS (
    SELECT draw.*,
           1 + (LEAST($4::bigint - 1,
                      floor(power($4::float8 + {USER_Q}, r_user) * power({USER_Q}, 1 - r_user) - {USER_Q}))::bigint
                * {USER_STRIDE}) % $4::bigint AS user_id,
           LEAST($5::int - 1, floor(power($5::float8 + {PROBLEM_Q}, r_problem) * power({PROBLEM_Q}, 1 - r_problem)
                 - {PROBLEM_Q}))::int AS problem_n,
           CASE WHEN r_mode < 0.38 THEN 'test' WHEN r_mode < 0.74 THEN 'benchmark' WHEN r_mode < 0.99 THEN 'ranked'
                ELSE 'profile' END AS mode,
           CASE WHEN r_status < 0.74 THEN 'passed' WHEN r_status < 0.92 THEN 'failed' ELSE 'error' END AS status
    FROM draw
)
INSERT INTO submissions (id, user_id, problem_id, problem_version, source_sha256, file_name, language, dtype, mode,
                         gpu_type, status, score, mean_score, score_metric, device, runner, error_code,
                         error_message, result_job_id, created_at, started_at, finished_at, method,
                         geomean_gflops, mean_gflops, geomean_gbps, mean_gbps)
OVERRIDING SYSTEM VALUE
SELECT d.g, d.user_id, p.problem_id, p.version, src.sha256,
       CASE WHEN d.r_lang < 0.5 THEN 'solution.cu' ELSE 'solution.py' END,
       CASE WHEN d.r_lang < 0.5 THEN 'cuda' WHEN d.r_lang < 0.8 THEN 'triton' ELSE 'python' END,
       p.dtypes[LEAST(cardinality(p.dtypes), CASE WHEN d.r_dtype < 0.6 THEN 1 WHEN d.r_dtype < 0.85 THEN 2 ELSE 3 END)],
       d.mode, gp.pool, d.status, x.score, x.score * 0.97, p.score_metric, gp.device,
       'runner-' || gp.pool || '-' || (d.g % 8),
       CASE d.status WHEN 'failed' THEN 'wrong_answer' WHEN 'error' THEN 'compile_error' END,
       CASE d.status WHEN 'failed' THEN 'Wrong answer on case 2' WHEN 'error' THEN 'nvcc failed' END,
       d.g, t.at, t.at + interval '2 seconds', t.at + interval '20 seconds',
       CASE WHEN x.score IS NOT NULL THEN CASE WHEN d.r_method < 0.05 THEN 'seed' ELSE 'arena' END END,
       CASE WHEN p.score_metric = 'gflops' THEN x.score END, CASE WHEN p.score_metric = 'gflops' THEN x.score END,
       CASE WHEN p.score_metric = 'gbps' THEN x.score END, CASE WHEN p.score_metric = 'gbps' THEN x.score END
FROM d
JOIN bench_problems p ON p.n = d.problem_n
JOIN bench_sources src ON src.n = d.source_n
JOIN bench_pools gp ON d.r_pool >= gp.lo AND d.r_pool < gp.hi
CROSS JOIN LATERAL (SELECT $8::timestamptz - $7::interval + (d.g - 1) * ($7::interval / $3::bigint) AS at) t
CROSS JOIN LATERAL (
    -- a user's skill (1 to 4.5 times the base), the pool's speed, and the run's own spread
    SELECT CASE WHEN d.status = 'passed' AND d.mode IN ('benchmark', 'ranked')
                THEN p.base * gp.speed * exp(1.5 * ((d.user_id * 2654435761) % 10007) / 10007.0)
                     * exp(0.8 * d.r_score) END AS score
) x
"""
_JOBS = """
INSERT INTO jobs (id, submission_id, gpu_type, state, attempts, runner, created_at, dispatched_at, started_at,
                  finished_at)
OVERRIDING SYSTEM VALUE
SELECT id, id, gpu_type, 'done', 1, runner, created_at, created_at + interval '1 second', started_at, finished_at
FROM submissions WHERE id BETWEEN $1 AND $2
"""
LOADED_TABLES = ("submissions", "jobs")


async def drop_for_load(conn: asyncpg.Connection) -> list[tuple[str, str, str]]:
    """Take the foreign keys, unique constraints and secondary indexes off `submissions` and `jobs` (each row
    inserted would otherwise update seven indexes at random places and check four keys); returns their
    definitions, to create them again once the rows are in."""
    dropped: list[tuple[str, str, str]] = []
    constraints = await conn.fetch(
        """SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE conrelid = ANY($1::regclass[]) AND contype IN ('f', 'u') ORDER BY contype DESC, conname""",
        list(LOADED_TABLES),
    )
    for c in constraints:
        dropped.append(("constraint", c["conname"], f"ALTER TABLE {c['tbl']} ADD CONSTRAINT {c['conname']} {c['def']}"))
        await conn.execute(f"ALTER TABLE {c['tbl']} DROP CONSTRAINT {c['conname']}")
    indexes = await conn.fetch(
        """SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
        WHERE i.indrelid = ANY($1::regclass[]) AND NOT i.indisprimary ORDER BY 1""",
        list(LOADED_TABLES),
    )
    for i in indexes:
        dropped.append(("index", i["name"], i["def"]))
        await conn.execute(f"DROP INDEX {i['name']}")
    return dropped


async def restore_after_load(conn: asyncpg.Connection, dropped: list[tuple[str, str, str]]) -> None:
    # Indexes first: the unique constraints build their own, and the foreign keys are checked with one join each.
    for kind in ("index", "constraint"):
        for k, name, definition in dropped:
            if k == kind:
                t = time.perf_counter()
                await conn.execute(definition)
                log(f"  {kind} {name} in {time.perf_counter() - t:.0f} s")


async def schema_of_loaded_tables(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch(
        """SELECT pg_get_indexdef(indexrelid) AS d FROM pg_index WHERE indrelid = ANY($1::regclass[])
        UNION ALL SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
        WHERE conrelid = ANY($1::regclass[])""",
        list(LOADED_TABLES),
    )
    return {r["d"] for r in rows}


async def load_boards(conn: asyncpg.Connection, cfg: Config) -> str:
    """Bans and invalidations as moderators leave them, then every board by the store's own rebuild."""
    rng = random.Random(cfg.seed + 3)
    banned = rng.sample(range(1, cfg.users + 1), max(1, cfg.users // 2000))
    await conn.executemany("INSERT INTO bans (user_id, reason) VALUES ($1, 'bench')", [(u,) for u in banned])
    await conn.execute("SELECT setseed($1)", 0.25)
    await conn.execute(
        """WITH picked AS (SELECT id FROM submissions TABLESAMPLE SYSTEM (1) WHERE mode = 'ranked' AND score IS NOT NULL
                           ORDER BY random() LIMIT $1)
        INSERT INTO invalidations (submission_id, reason) SELECT id, 'bench' FROM picked""",
        max(1, cfg.submissions // 20_000),
    )
    await conn.execute(
        "UPDATE submissions SET invalidated = true WHERE id IN (SELECT submission_id FROM invalidations)"
    )
    for table in ("submissions", "jobs"):
        await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    t = time.perf_counter()
    async with conn.transaction():
        entries = await leaderboard.rebuild(conn)
    return f"{entries:,} board rows (leaderboard.rebuild) in {time.perf_counter() - t:.0f} s"


async def busiest_problems(pool: asyncpg.Pool, n: int) -> list[str]:
    rows = await pool.fetch(
        "SELECT p.slug FROM leaderboard_entries e JOIN problems p ON p.id = e.problem_id "
        "WHERE e.language = 'any' AND e.gpu_type = 'h100' AND e.dtype = 'float32' GROUP BY p.slug "
        "ORDER BY count(*) DESC LIMIT $1",
        n,
    )
    return [r["slug"] for r in rows]


async def load_contests(pool: asyncpg.Pool, end: datetime) -> str:
    """One-day contests every four weeks of the year, each on three of the ten busiest problems, created, frozen
    and rated by the core; then one that has run for four weeks and is still running."""
    busy = await busiest_problems(pool, 10)
    begins, i = end - SPAN + timedelta(days=7), 0
    t = time.perf_counter()
    while begins + timedelta(days=1) < end - timedelta(days=28):
        problems = tuple(busy[(i + k) % len(busy)] for k in range(3))
        draft = ContestDraft(
            f"day-{i + 1}", f"Day {i + 1}", begins, begins + timedelta(days=1), problems, CONTEST_TARGETS
        )
        await create_contest(pool, MODERATOR, draft, now=begins - timedelta(days=1), gpus=GPUS)
        begins, i = begins + CONTEST_EVERY, i + 1
    report = await freeze_if_due(pool, end)
    live_start = end - timedelta(days=28)
    live = ContestDraft("open", "Open", live_start, end + timedelta(days=60), tuple(busy[:3]), CONTEST_TARGETS)
    await create_contest(pool, MODERATOR, live, now=live_start - timedelta(days=1), gpus=GPUS)
    sizes = [len(f.board.lines) for f in report.frozen]
    rated = await pool.fetchval("SELECT count(*) FROM ratings")
    return (
        f"{i} one-day contests frozen and rated in {time.perf_counter() - t:.0f} s "
        f"({min(sizes, default=0):,} to {max(sizes, default=0):,} entrants, {rated:,} rated users); "
        f"one running on {', '.join(busy[:3])}"
    )


async def apply_later_migrations(conn: asyncpg.Connection) -> list[str]:
    """Apply the migrations numbered past the last one the store has, as `migrate` would, without checking the
    applied ones against their files; returns their names."""
    last = await conn.fetchval("SELECT max(version) FROM schema_migrations")
    names = []
    async with conn.transaction():
        for m in (m for m in discover() if m.version > last):
            await conn.execute(m.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, reason, sha256) VALUES ($1, $2, $3)",
                m.version,
                m.reason,
                m.sha256,
            )
            names.append(f"V{m.version:03d} {m.reason}")
    return names


async def load(dsn: str, cfg: Config, state: LoadState, state_path: Path, out: list[str]) -> None:
    steps: list[str] = []
    started = time.perf_counter()
    conn = await asyncpg.connect(dsn, command_timeout=None)
    try:
        # The load's own connection: no wait for each commit's flush (a crash loses at most the last chunk, which
        # the resumed load writes again), and memory for the index builds and the boards' sort.
        await conn.execute("SET synchronous_commit = off; SET maintenance_work_mem = '1GB'; SET work_mem = '256MB'")
        if state.reference:
            try:  # a migration added since the load (an index, say) applies to the loaded store too
                applied = await migrate(conn)
                if applied:
                    steps.append(f"applied {', '.join(f'V{m.version:03d} {m.reason}' for m in applied)}")
            except MigrationError as exc:
                # A migration applied at the load was edited since (a tree in flux): the newer ones still apply.
                later = await apply_later_migrations(conn)
                steps.append(f"{exc} Applied on top of the loaded schema: {', '.join(later) or 'nothing'}")
        else:
            await migrate(conn)
            async with create_pool(dsn, min_size=1, max_size=2, command_timeout=600) as pool:
                await load_reference(pool, cfg)
            state.schema = sorted(await schema_of_loaded_tables(conn))
            state.dropped = await drop_for_load(conn)
            state.reference = True
            state.save(state_path)
            log(f"reference data: {cfg.problems} problems, {cfg.users:,} users, {cfg.sources:,} sources")
        if state.loaded < cfg.submissions:
            await bench_tables(conn, cfg)
            end = datetime.fromisoformat(state.end)
            t = time.perf_counter()
            while state.loaded < cfg.submissions:
                lo, hi = state.loaded + 1, min(cfg.submissions, state.loaded + CHUNK)
                async with conn.transaction():
                    await conn.execute("SELECT setseed($1)", (cfg.seed % 997 + lo % 65_537) / 70_000)
                    await conn.execute(
                        _SUBMISSIONS, lo, hi, cfg.submissions, cfg.users, cfg.problems, cfg.sources, SPAN, end
                    )
                    await conn.execute(_JOBS, lo, hi)
                state.loaded = hi
                state.save(state_path)
                rate = (hi - lo + 1) / (time.perf_counter() - t)
                log(f"submissions + jobs: {hi:,} of {cfg.submissions:,} ({rate:,.0f}/s for this chunk)")
                t = time.perf_counter()
            steps.append(f"submissions + jobs (all resumed parts) {time.perf_counter() - started:.0f} s")
        if not state.indexed:
            t = time.perf_counter()
            await restore_after_load(conn, state.dropped or [])
            restored = await schema_of_loaded_tables(conn)
            if restored != set(state.schema or []):
                raise RuntimeError(
                    f"the indexes and keys differ from the migrated ones: {restored ^ set(state.schema or [])}"
                )
            state.indexed = True
            state.save(state_path)
            steps.append(
                f"{len(state.dropped or [])} indexes and keys created again in {time.perf_counter() - t:.0f} s "
                f"(the {len(restored)} definitions of the migrations, compared)"
            )
        if not state.boards:
            steps.append(await load_boards(conn, cfg))
            t = time.perf_counter()
            await conn.execute("VACUUM ANALYZE")
            steps.append(f"VACUUM ANALYZE {time.perf_counter() - t:.0f} s")
            state.boards = True
            state.save(state_path)
        if not state.contests:
            async with create_pool(dsn, min_size=1, max_size=4, command_timeout=3600) as pool:
                steps.append(await load_contests(pool, datetime.fromisoformat(state.end)))
            await conn.execute("ANALYZE")
            state.contests = True
            state.save(state_path)
    finally:
        await conn.close()
    if steps:
        note(out, f"load: {time.perf_counter() - started:.0f} s this run ({'; '.join(steps)})")


# -- measuring --------------------------------------------------------------------------------------------------


def quantile(samples: list[float], q: int) -> float:
    return statistics.quantiles(sorted(samples), n=100, method="inclusive")[q - 1]


def percentiles(samples: list[float]) -> str:
    return (
        f"p50 {quantile(samples, 50):7.2f} ms   p95 {quantile(samples, 95):7.2f} ms   "
        f"p99 {quantile(samples, 99):7.2f} ms   max {max(samples):7.2f} ms"
    )


async def timed(calls: list[Callable[[], Awaitable[object]]], warm: int = 20) -> list[float]:
    for call in calls[:warm]:  # prepared statements, caches, the first connections
        await call()
    samples = []
    for call in calls:
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


@dataclass(frozen=True)
class BoardRef:
    slug: str
    gpu: str
    dtype: str
    method: str
    entries: int


async def all_boards(conn: asyncpg.Pool) -> list[BoardRef]:
    rows = await conn.fetch(
        """SELECT p.slug, e.gpu_type, e.dtype, e.method, count(*) AS n FROM leaderboard_entries e
        JOIN problems p ON p.id = e.problem_id AND p.current_version = e.problem_version
        WHERE e.language = 'any' GROUP BY 1, 2, 3, 4 ORDER BY n DESC, 1, 2, 3, 4"""
    )
    return [BoardRef(r["slug"], r["gpu_type"], r["dtype"], r["method"], r["n"]) for r in rows]


async def board_members(pool: asyncpg.Pool, board: BoardRef) -> list[str]:
    rows = await pool.fetch(
        """SELECT u.external_id FROM leaderboard_entries e JOIN problems p ON p.id = e.problem_id
        AND p.current_version = e.problem_version JOIN users u ON u.id = e.user_id
        WHERE p.slug = $1 AND e.gpu_type = $2 AND e.dtype = $3 AND e.method = $4 AND e.language = 'any'
        ORDER BY u.external_id""",
        board.slug,
        board.gpu,
        board.dtype,
        board.method,
    )
    return [r["external_id"] for r in rows]


async def measure_queries(pool: asyncpg.Pool, queries: int, seed: int, out: list[str]) -> float:
    """Top 20 and a user's rank, on the fullest board and on random ones; returns the worst p95 (ms)."""
    rng = random.Random(seed + 1)
    boards = await all_boards(pool)
    top = boards[0]
    members = {top: await board_members(pool, top)}
    picks = [rng.choice(boards) for _ in range(queries)]
    # A rank is asked by people on the board: a random member of each board picked.
    for b in set(picks):
        members[b] = await board_members(pool, b)
    top_users = [rng.choice(members[top]) for _ in range(queries)]
    pick_users = [rng.choice(members[b]) for b in picks]
    sizes = sorted(b.entries for b in boards)
    note(
        out,
        f"boards: {len(boards)} (problem, GPU, dtype, method) boards at current versions; users per board: median "
        f"{sizes[len(sizes) // 2]:,}, max {sizes[-1]:,} ({top.slug} / {top.gpu} / {top.dtype} / {top.method})",
    )
    cases: dict[str, list[Callable[[], Awaitable[object]]]] = {
        "get_leaderboard top-20, fullest board": [
            lambda: get_leaderboard(pool, top.slug, top.gpu, top.dtype)
        ] * queries,
        "get_leaderboard top-20, random boards": [
            lambda b=b: get_leaderboard(pool, b.slug, b.gpu, b.dtype) for b in picks
        ],
        "leaderboard_page top-20 + caller's row, random": [
            lambda b=b, u=u: leaderboard_page(
                pool, b.slug, b.gpu, b.dtype, "any", page=0, page_size=20, caller_external_id=u
            )
            for b, u in zip(picks, pick_users, strict=True)
        ],
        "get_rank, fullest board": [
            lambda u=u: get_rank(pool, top.slug, top.gpu, top.dtype, u) for u in top_users
        ],
        "get_rank, random boards": [
            lambda b=b, u=u: get_rank(pool, b.slug, b.gpu, b.dtype, u) for b, u in zip(picks, pick_users, strict=True)
        ],
    }  # fmt: skip
    worst = 0.0
    for name, calls in cases.items():
        samples = await timed(calls)
        worst = max(worst, quantile(samples, 95))
        note(out, f"{name:<48} ({len(calls)} calls): {percentiles(samples)}")
    return worst


async def measure_pages(pool: asyncpg.Pool, requests: int, now: datetime, seed: int, out: list[str]) -> float:
    """Whole requests to the web app on a loopback port; returns the worst p95 (ms)."""
    rng = random.Random(seed + 2)
    boards = await all_boards(pool)
    busiest = boards[0].slug
    picked = [rng.choice(boards) for _ in range(requests)]
    rated = [r["user_id"] for r in await pool.fetch("SELECT user_id FROM ratings ORDER BY user_id")]
    heavy = [
        r["user_id"]
        for r in await pool.fetch(
            "SELECT s.user_id FROM submissions s TABLESAMPLE SYSTEM (1) JOIN ratings r ON r.user_id = s.user_id "
            "GROUP BY s.user_id ORDER BY count(*) DESC, s.user_id LIMIT 20"
        )
    ]
    ranked = [
        r["id"]
        for r in await pool.fetch(
            "SELECT id FROM submissions TABLESAMPLE SYSTEM (0.1) WHERE mode = 'ranked' AND status = 'passed' "
            "AND NOT invalidated ORDER BY id LIMIT 2000"
        )
    ]
    frozen = await pool.fetchval(
        "SELECT c.slug FROM contests c JOIN contest_standings s ON s.contest_id = c.id "
        "GROUP BY c.slug ORDER BY count(*) DESC, c.slug LIMIT 1"
    )
    pages: list[tuple[str, Callable[[int], str]]] = [
        ("/ (problem list)", lambda i: "/"),
        (f"/problems/{busiest} (default board)", lambda i: f"/problems/{busiest}"),
        (f"/problems/{busiest}?lang=cuda&page=3", lambda i: f"/problems/{busiest}?lang=cuda&page=3"),
        (
            "/problems/<random board>",
            lambda i: (
                f"/problems/{picked[i].slug}?gpu={picked[i].gpu}&dtype={picked[i].dtype}&method={picked[i].method}"
            ),
        ),
        ("/submissions/<random ranked id>", lambda i: f"/submissions/{ranked[i % len(ranked)]}"),
        ("/ratings", lambda i: "/ratings"),
        ("/users/<random rated player>", lambda i: f"/users/{rng.choice(rated)}"),
        ("/users/<one of the 20 heaviest rated>", lambda i: f"/users/{heavy[i % len(heavy)]}"),
        ("/contests", lambda i: "/contests"),
        ("/contests/open (running, kept board)", lambda i: "/contests/open"),
        (f"/contests/{frozen} (frozen board)", lambda i: f"/contests/{frozen}"),
    ]
    worst = 0.0
    app = create_app(WebSettings(), pool, clock=lambda: now)
    async with TestServer(app, host="127.0.0.1") as server, ClientSession() as http:

        async def get(path: str) -> None:
            async with http.get(server.make_url(path)) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET {path} answered {response.status}")

        for label, path in pages:
            samples = await timed([lambda i=i, path=path: get(path(i)) for i in range(requests)], warm=5)
            worst = max(worst, quantile(samples, 95))
            note(out, f"{label:<48} ({requests} requests): {percentiles(samples)}")
    # The running contest's board computed on every request (no kept board): what its first reader and each
    # background refresh cost. Reported, not a goal: readers get the kept board.
    uncached = create_app(WebSettings(board_cache_s=0), pool, clock=lambda: now)
    async with TestServer(uncached, host="127.0.0.1") as server, ClientSession() as http:

        async def fetch(i: int) -> None:
            async with http.get(server.make_url("/contests/open")) as response:
                await response.read()

        samples = await timed([lambda i=i: fetch(i) for i in range(10)], warm=1)
        note(out, f"{'/contests/open, computed on every request':<48} (10 requests): {percentiles(samples)}")
    return worst


async def measure_submits(
    pool: asyncpg.Pool, loaded: int, submits: int, concurrency: int, seed: int, out: list[str], *, service: bool
) -> float:
    """`ArenaService.submit` (`service`) or `submit()` from concurrent callers, each request from another user (none is
    refused by the limits, which are still taken); returns submissions a second. What it adds is deleted
    afterwards."""
    rng = random.Random(seed + 4)
    slugs = [s.slug for s in await _problems(pool)]
    users = [
        r["external_id"]
        for r in await pool.fetch(
            "SELECT external_id FROM users u WHERE external_id LIKE 'discord:%' "
            "AND NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = u.id) ORDER BY id"
        )
    ]
    rng.shuffle(users)
    dtypes = {s.slug: s.dtypes for s in await _problems(pool)}
    requests = []
    for i in range(submits):
        user = users[i % len(users)]
        slug = rng.choice(slugs)
        mode = rng.choices(("test", "benchmark", "ranked"), weights=(38, 36, 25))[0]
        gpu = rng.choices([p[0] for p in POOLS], weights=[p[1] for p in POOLS])[0]
        source = f"// bench submit {seed} {i}\n{'y' * rng.randrange(500, 6000)}\n".encode()
        requests.append(
            SubmitRequest(
                user, "user" + str(int(user.split(":")[1]) - 100000000000000000), slug,
                check_upload("solution.cu", source), gpu, rng.choice(dtypes[slug]), mode,
                client_token=f"bench-{seed}-{i}",
            )
        )  # fmt: skip
    queue: asyncio.Queue[SubmitRequest] = asyncio.Queue()
    for r in requests:
        queue.put_nowait(r)
    latencies: list[float] = []
    limits = RateLimitSettings()
    front = ArenaService(pool, Settings(rate=limits), lambda: [p[0] for p in POOLS])

    async def one(request: SubmitRequest) -> None:
        if not service:
            await submit(pool, request, limits)
            return
        await front.submit(
            user_external_id=request.user_external_id,
            user_name=request.user_name,
            slug=request.problem_slug,
            file_name=request.upload.file_name,
            data=request.upload.source.encode(),
            dtype=request.dtype,
            mode=request.mode,
            gpu=request.gpu_type,
            client_token=request.client_token,
        )

    async def worker() -> None:
        while not queue.empty():
            request = queue.get_nowait()
            start = time.perf_counter()
            await one(request)
            latencies.append((time.perf_counter() - start) * 1000)

    await remove_bench_submissions(pool, loaded)  # left by a run that was stopped
    server_pid = await pool.fetchval("SELECT pg_backend_pid()")
    try:
        server_cpu, own_cpu = server_cpu_s(server_pid), time.process_time()
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        server_cpu, own_cpu = server_cpu_s(server_pid) - server_cpu, time.process_time() - own_cpu
    finally:
        await remove_bench_submissions(pool, loaded)
    rate = submits / elapsed
    callers = f"{concurrency} concurrent callers, pool of {pool.get_max_size()}"
    what = "ArenaService.submit (/submit)" if service else "submit() (the store's part)"
    note(out, f"{what}: {submits:,} submissions, {callers}: {rate:,.0f}/s; latency {percentiles(latencies)}")
    note(
        out,
        f"  CPU a submission: {own_cpu / submits * 1000:.2f} ms in this process (the callers, asyncpg, the core), "
        f"{server_cpu / submits * 1000:.2f} ms in PostgreSQL's processes; {os.cpu_count()} cores",
    )
    if service:
        sizes = front.submitter.sizes
        batches = sum(sizes.values())
        mean = submits / max(batches, 1)
        note(out, f"  stored in {batches:,} batches of {mean:.1f} requests on average, at most {max(sizes)}")
    return rate


def server_cpu_s(backend_pid: int) -> float:
    """CPU seconds used so far by every process of the PostgreSQL server that `backend_pid` belongs to (its
    postmaster and the postmaster's children, the backends and the WAL writer among them); 0 without /proc."""
    table = processes()
    found = table.get(backend_pid)
    return tree_cpu_s([found[0]], table) if found is not None else 0.0


async def remove_bench_submissions(pool: asyncpg.Pool, loaded: int) -> None:
    """Delete what the submit measurement added: the submissions and jobs past the `loaded` ones (their ids), their
    sources and every rate-limit bucket (the load writes none), so that the store is the loaded one again."""
    async with pool.acquire() as conn, conn.transaction():
        # Nothing else refers to these rows, so the foreign keys' checks are skipped: each job deleted would
        # otherwise look for submissions naming it as their result, and `submissions.result_job_id` has no index.
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute("DELETE FROM jobs WHERE id > $1", loaded, timeout=600)
        await conn.execute("DELETE FROM submissions WHERE id > $1", loaded, timeout=600)
        await conn.execute("DELETE FROM sources WHERE body LIKE '// bench submit %'", timeout=600)
        await conn.execute("DELETE FROM rate_limits", timeout=600)
        # The triggers that keep the waiting users' counts were off for the deletes above: count them again, as
        # migration V015 first did (no job of the load is queued), in one grouped pass: a count for each waiter
        # would walk every live job's index entry, dead ones included, each time (75 s after 15,000 submissions).
        await conn.execute(
            """UPDATE queue_waiters w SET queued = coalesce(c.n, 0)
               FROM queue_waiters o LEFT JOIN (
                   SELECT gpu_type, user_id, mode, count(*)::int AS n FROM jobs WHERE state = 'queued'
                   GROUP BY gpu_type, user_id, mode
               ) c ON (c.gpu_type, c.user_id, c.mode) = (o.gpu_type, o.user_id, o.mode)
               WHERE o.queued > 0 AND (w.gpu_type, w.user_id, w.mode) = (o.gpu_type, o.user_id, o.mode)""",
            timeout=600,
        )
    # Those deletes and the recount leave thousands of dead rows at once, which production's steady churn never does
    # (V020's autovacuum clears queue_waiters within a minute; 10,000 dead rows are far below the threshold of a
    # 10-million-row table): left there, they slow the next measurement, so that the second path timed paid for the
    # first's cleanup, and each run was slower than the one before (3.1, 3.4, 3.6 ms of CPU a submission).
    for table in ("queue_waiters", "jobs", "submissions", "sources", "rate_limits"):
        await pool.execute(f"VACUUM {table}", timeout=600)


@dataclass(frozen=True)
class _Problem:
    slug: str
    dtypes: list[str]


async def _problems(pool: asyncpg.Pool) -> list[_Problem]:
    rows = await pool.fetch(
        "SELECT p.slug, v.dtypes FROM problems p JOIN problem_versions v ON v.problem_id = p.id "
        "AND v.version = p.current_version ORDER BY p.slug"
    )
    return [_Problem(r["slug"], list(r["dtypes"])) for r in rows]


# -- the run ----------------------------------------------------------------------------------------------------


def machine() -> str:
    mem = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")), platform.processor()
    )  # fmt: skip
    nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout.strip()
    return (
        f"machine: {platform.machine()}, nproc {nproc} ({cpu}), {int(mem.split()[1]) / 2**20:.1f} GiB memory, "
        f"Linux {platform.release()}; Python {platform.python_version()}, asyncpg {asyncpg.__version__}"
    )


# The server settings of a production store (deploy/k8s/components/cnpg/cluster.yaml, docs/store.md), not the
# defaults of a fresh embedded server. shared_buffers 128MB holds little of a 7 GB store: a run of 10,000
# submissions (with its cleanup) read about 20 pages a submission from the OS's cache and wrote about 6 dirty ones
# out to make room. PostgreSQL 18's io_method `worker` hands each such read to an I/O worker process and waits for
# it; PostgreSQL 17, which the deployments run, reads in the backend itself, as `sync` does. With both defaults the
# service path took 490-670 submissions a second here, with `sync` 720-800, with `sync` and 1GB 690-860.
SERVER_SETTINGS = {"shared_buffers": "1GB", "io_method": "sync"}


async def configured_server(data_dir: Path) -> EmbeddedPostgres:
    """The embedded server in `data_dir` with SERVER_SETTINGS, restarted if it ran with others."""
    server = await start_embedded(data_dir)
    admin = await asyncpg.connect(server.dsn())
    try:
        known = {r["name"]: r["setting"] for r in await admin.fetch("SELECT name, setting FROM pg_settings")}
        wanted = {name: value for name, value in SERVER_SETTINGS.items() if name in known}  # io_method: 18 and later
        for name, value in wanted.items():
            await admin.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        shown = [await admin.fetchval(f"SHOW {name}") for name in wanted]
    finally:
        await admin.close()
    if shown != list(wanted.values()):
        log(f"restarting the server in {data_dir} with {wanted}")
        await server.stop()
        server = await start_embedded(data_dir)
    return server


def prepare_data_dir(data_dir: Path, cfg: Config, reuse: bool) -> tuple[LoadState, Path]:
    state_path = data_dir / STATE_FILE
    if reuse and state_path.exists():
        state = LoadState.read(state_path)
        if state.config != asdict(cfg):
            raise SystemExit(
                f"{data_dir} holds a load of {state.config}, not {asdict(cfg)}: run with the same sizes and seed, "
                "or without --reuse (which starts that directory again) or with another --data-dir."
            )
        return state, state_path
    if data_dir.exists() and any(data_dir.iterdir()):
        if not state_path.exists():
            raise SystemExit(f"{data_dir} is not empty and holds no {STATE_FILE}: give an empty or new --data-dir.")
        log(f"starting {data_dir} again (no --reuse)")
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    state = LoadState(asdict(cfg), end.isoformat())
    state.save(state_path)
    return state, state_path


async def run(args: argparse.Namespace, cfg: Config, out: list[str]) -> tuple[float, float, float]:
    state, state_path = prepare_data_dir(args.data_dir, cfg, args.reuse)
    server = await configured_server(args.data_dir / "pg")
    try:
        admin = await asyncpg.connect(server.dsn())
        try:
            if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", DATABASE):
                await admin.execute(f"CREATE DATABASE {DATABASE}")
            settings = [
                await admin.fetchval(f"SHOW {s}")
                for s in ("server_version", "shared_buffers", "work_mem", "synchronous_commit", "max_wal_size")
            ]
            io_method = await admin.fetchval("SELECT setting FROM pg_settings WHERE name = 'io_method'")
        finally:
            await admin.close()
        note(
            out,
            f"server: PostgreSQL {settings[0]} (embedded, {args.data_dir}), shared_buffers {settings[1]}, "
            f"work_mem {settings[2]}, synchronous_commit {settings[3]}, max_wal_size {settings[4]}, "
            f"io_method {io_method or '(none: synchronous reads)'}",
        )
        dsn = server.dsn(DATABASE)
        await load(dsn, cfg, state, state_path, out)
        conn = await asyncpg.connect(dsn)
        try:
            counts = await conn.fetchrow(
                """SELECT (SELECT count(*) FROM submissions) AS submissions, (SELECT count(*) FROM jobs) AS jobs,
                (SELECT count(*) FROM leaderboard_entries) AS entries, (SELECT count(*) FROM sources) AS sources,
                (SELECT count(*) FROM submissions WHERE mode = 'ranked') AS ranked,
                pg_size_pretty(pg_database_size(current_database())) AS size"""
            )
            top = await conn.fetchrow("SELECT count(*) AS n FROM submissions GROUP BY user_id ORDER BY n DESC LIMIT 1")
        finally:
            await conn.close()
        note(
            out,
            f"store: {counts['submissions']:,} submissions ({counts['ranked']:,} ranked; the heaviest user "
            f"{top['n']:,}), {counts['jobs']:,} jobs, {counts['sources']:,} sources, {counts['entries']:,} board rows; "
            f"database {counts['size']}",
        )
        now = datetime.fromisoformat(state.end)
        averages = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        note(out, f"load average as the measurements start: {averages} (1, 5, 15 min; other work shares these cores)")
        async with create_pool(dsn, min_size=args.pool, max_size=args.pool, command_timeout=60) as pool:
            board_p95 = 0.0 if args.submit_only else await measure_queries(pool, args.queries, cfg.seed, out)
            page_p95 = 0.0 if args.submit_only else await measure_pages(pool, args.requests, now, cfg.seed, out)
            if args.paths in ("both", "submit"):
                await repeated_submits(pool, cfg, args, out, service=False)
            rate = 0.0
            if args.paths in ("both", "service"):
                rate = await repeated_submits(pool, cfg, args, out, service=True)
        return board_p95, page_p95, rate
    finally:
        await server.stop()


async def repeated_submits(
    pool: asyncpg.Pool, cfg: Config, args: argparse.Namespace, out: list[str], *, service: bool
) -> float:
    """`measure_submits` `args.repeat` times (each run cleaned up after); the median rate. A run of 10,000
    submissions takes about 15 s, and runs minutes apart on this machine differed by as much as any change tried."""
    seed = cfg.seed + (1 if service else 0)
    rates = [
        await measure_submits(pool, cfg.submissions, args.submits, args.concurrency, seed, out, service=service)
        for _ in range(args.repeat)
    ]
    if len(rates) > 1:
        shown = ", ".join(f"{r:,.0f}" for r in rates)
        note(out, f"  the median of {len(rates)} runs: {statistics.median(rates):,.0f}/s ({shown})")
    return statistics.median(rates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/arena-store-10m"))
    parser.add_argument("--reuse", action="store_true", help="measure the store loaded there (or finish its load)")
    parser.add_argument("--submissions", type=int, default=10_000_000)
    parser.add_argument("--users", type=int, default=50_000)
    parser.add_argument("--problems", type=int, default=100)
    parser.add_argument("--sources", type=int, default=20_000, help="distinct source texts")
    parser.add_argument("--queries", type=int, default=1000, help="timed calls per board query")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per web page")
    parser.add_argument("--submits", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32, help="concurrent submit() callers")
    parser.add_argument("--submit-only", action="store_true", help="measure the submit paths alone")
    parser.add_argument(
        "--paths",
        choices=("both", "submit", "service"),
        default="both",
        help="which submit paths to time; the second of two pays for the first's cleanup (10,000 rows deleted from "
        "the 10M tables just before), so time one per run to compare runs",
    )
    parser.add_argument("--pool", type=int, default=10, help="connections (the service's default ARENA_POOL_MAX_SIZE)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each submit path, each cleaned up after; the goal takes their median",
    )
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    cfg = Config(args.submissions, args.users, args.problems, args.sources, args.seed)
    out = [
        f"store_10m {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        machine(),
        f"data: {cfg.submissions:,} submissions, {cfg.users:,} users, {cfg.problems} problems, "
        f"{len(POOLS)} GPU pools, {cfg.sources:,} distinct sources, seed {cfg.seed}",
    ]
    board_p95, page_p95, rate = asyncio.run(run(args, cfg, out))
    goals = [
        ("board queries p95 <= 5 ms", f"worst {board_p95:.2f} ms", board_p95 <= BOARD_GOAL_MS),
        ("web pages p95 <= 200 ms", f"worst {page_p95:.1f} ms", page_p95 <= PAGE_GOAL_MS),
        ("submit (ArenaService.submit) >= 1,000/s", f"{rate:,.0f}/s", rate >= SUBMIT_GOAL),
    ]
    if args.submit_only:
        goals = goals[2:]
    if args.paths == "submit":
        goals = [g for g in goals if not g[0].startswith("submit")]
    out += [f"goal: {name}: {value}: {'met' if ok else 'MISSED'}" for name, value, ok in goals]
    report = "\n".join(out) + "\n"
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0 if all(ok for *_, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
