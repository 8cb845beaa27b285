"""The fleet at scale: `arena api` dispatching 100,000 queued jobs of 1,000 users to one real CPU runner daemon and
72 simulated runners, measured.

    python bench/fleet.py --out bench/results/fleet.txt

What runs (all real processes on this machine, over one store: a fresh embedded PostgreSQL in a temporary
directory, or a new database on DATABASE_URL's server):
- `--replicas` × `python -m api` (`arena api`), each serving the runners' API and dispatching (owner api-1, ...);
- one real runner daemon, `python -m runner serve --join URL --token-file F` on the CPU, under `nice` so that its
  sandboxed jobs take the CPU the rest leaves (it runs real submissions of vector-addition);
- `--sim-procs` × `bench/fleet_sim_runner.py`, each hosting `--sim-per-proc` simulated runners on their own ports:
  they join the `cpu` pool with the bootstrap token, register, send heartbeats and answer the runner API the
  dispatcher calls, checking its signatures with their own secret; a job takes `--job-ms` ± `--jitter-ms`.

The store is loaded with COPY before anything starts: `--users` users and `--jobs` queued submissions of
vector-addition (Python, float32, pool `cpu`), their users' shares of the queue spread log-normally (a few heavy
users, many light ones), in modes benchmark (40 %) and ranked (60 %). The jobs go through the same trigger as the
submit path's (V012 fills each job's user and mode), so the claim sees real rows.

Phase 1, throughput (`--window` seconds once every runner is live and `--warmup` seconds have passed):
- dispatches per second: transitions to `dispatched` in the window (job_transitions); jobs finished per second:
  jobs that reached a final state in the window;
- dispatch latency, claim → POST: from the claim statement's start (the job's `dispatched_at`, the claim
  transaction's `now()`) to a simulated runner receiving the job's `POST /v1/jobs` (its `time.time()`; one clock,
  one machine). It covers the claim, the dispatcher starting the job's task, reading the job's spec and posting;
- runner idle gap, done → POST: from a simulated runner emitting the `done` event of its job to the next
  `POST /v1/jobs` it receives (its monotonic clock): what a slot freeing costs end to end (the dispatcher reads
  `done`, stores the result, frees the slot, wakes, claims, reads the spec, posts);
- the claim statement's own time: `claim_next` as the dispatcher calls it, run by this process every
  `--probe-every` seconds on the live queue inside a transaction that is rolled back (so it dispatches nothing),
  timed on the client; and EXPLAIN ANALYZE of one claim before the fleet starts (100k queued).

Phase 2, a light user beside a heavy one (`--light-window` seconds): a heavy user's `test` jobs are kept at
`--heavy-queued` queued (topped up in bulk every 0.2 s), and a light user submits one `test` job every
`--light-every` seconds (± 50 %) through the submit path (`core.submit.intake.submit`). A light job's wait is from
its `created_at` (the submit transaction) to its `dispatched_at`; the goal is that it starts within one job
duration: every runner frees its slot within `--job-ms + --jitter-ms`, and the light user's job, whose user waited
longest, takes the first slot that frees.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cpu import machine_busy_s, processes, tree_cpu_s  # noqa: E402
from core import fleet  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.settings import RateLimitSettings, StoreSettings  # noqa: E402
from core.store import fleet as fleet_store  # noqa: E402
from core.store import jobs  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool, with_database  # noqa: E402
from core.submit.intake import SubmitRequest, submit  # noqa: E402
from core.submit.uploads import check_upload  # noqa: E402

DATABASE = "arena_bench_fleet"
POOL = "cpu"
SLUG = "vector-addition"
SOURCE = (
    "import torch\n\n\n"
    "def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:\n"
    "    torch.add(input_a, input_b, out=output_c)\n"
)
BACKGROUND_MODES = (("benchmark", 0.4), ("ranked", 0.6))
CHUNK = 50_000
LEASE_S = 60.0
ROOMY = RateLimitSettings(test_burst=100_000, test_per_hour=1e9)
# The real runner's limits, as the fleet tests give them (tests/runner/conftest.py): generous for a loaded machine.
REAL_RUNNER_ENV = {
    "RUNNER_COMPILE_TIMEOUT_S": "60",
    "RUNNER_TEST_TIMEOUT_S": "8",
    "RUNNER_BENCHMARK_TIMEOUT_S": "40",
    "RUNNER_JOB_TIMEOUT_S": "120",
    "RUNNER_MAX_FILE_MB": "64",
    "RUNNER_MAX_PROCESSES": "96",
    "RUNNER_SCRATCH_MB": "256",
    "RUNNER_DEVICE": "cpu",
    "RUNNER_WARM_WORKERS": "false",
}


@dataclass(frozen=True)
class Config:
    users: int
    jobs: int
    replicas: int
    sim_procs: int
    sim_per_proc: int
    job_ms: float
    jitter_ms: float
    warmup: float
    window: float
    light_window: float
    light_every: float
    heavy_queued: int
    probe_every: float
    real_nice: int
    seed: int

    @property
    def runners(self) -> int:
        return self.sim_procs * self.sim_per_proc + 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentiles(samples: Sequence[float], unit: str = "ms") -> str:
    if len(samples) < 2:
        return f"n={len(samples)} (too few)"
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return (
        f"p50 {q[49]:8.2f} {unit}   p95 {q[94]:8.2f} {unit}   p99 {q[98]:8.2f} {unit}   "
        f"max {ordered[-1]:8.2f} {unit}   (n={len(ordered)})"
    )


def p95(samples: Sequence[float]) -> float:
    return statistics.quantiles(sorted(samples), n=100, method="inclusive")[94] if len(samples) >= 2 else float("nan")


def machine() -> str:
    mem_kib = next(
        (
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    load = os.getloadavg()
    return (
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, memory {mem_kib / 1024 / 1024:.1f} GiB, "
        f"load average before the run {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} · Python {platform.python_version()}, "
        f"asyncpg {asyncpg.__version__}, aiohttp {aiohttp.__version__}"
    )


def pick(rng: random.Random, table: tuple[tuple[str, float], ...]) -> str:
    return rng.choices([t[0] for t in table], weights=[t[1] for t in table])[0]


# -- loading ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    problem_id: int
    problem_version: int
    source_sha256: bytes
    heavy_id: int
    light_id: int


async def load(pool: asyncpg.Pool, cfg: Config, out: list[str]) -> Loaded:
    """The problem, `cfg.users` background users plus a heavy and a light one, and `cfg.jobs` queued jobs."""
    from problems.registry import builtin_problems

    started = time.perf_counter()
    problem = await sync_problem(pool, ProblemSpec.builtin(builtin_problems()[SLUG]))
    rng = random.Random(cfg.seed)
    sha = hashlib.sha256(SOURCE.encode()).digest()
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO sources (sha256, body, size_bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            sha,
            SOURCE,
            len(SOURCE.encode()),
        )
        users = [(i, f"bench:{i}", f"user{i}") for i in range(1, cfg.users + 1)]
        users += [(cfg.users + 1, "bench:heavy", "heavy"), (cfg.users + 2, "bench:light", "light")]
        await conn.copy_records_to_table("users", columns=["id", "external_id", "display_name"], records=users)
        weights = [rng.lognormvariate(0, 1.5) for _ in range(cfg.users)]
        owners = rng.choices(range(1, cfg.users + 1), weights=weights, k=cfg.jobs)
        now = datetime.now(UTC)
        start, step = now - timedelta(hours=1), timedelta(hours=1) / cfg.jobs
        columns = ["id", "user_id", "problem_id", "problem_version", "source_sha256", "file_name", "language", "dtype"]
        columns += ["mode", "gpu_type", "created_at"]
        for first in range(0, cfg.jobs, CHUNK):
            rows = [
                (i + 1, owners[i], problem.problem_id, problem.version, sha, "solution.py", "python", "float32",
                 pick(rng, BACKGROUND_MODES), POOL, start + step * i)
                for i in range(first, min(first + CHUNK, cfg.jobs))
            ]  # fmt: skip
            await conn.copy_records_to_table("submissions", columns=columns, records=rows)
            await conn.copy_records_to_table(
                "jobs",
                columns=["id", "submission_id", "gpu_type", "created_at"],
                records=[(r[0], r[0], POOL, r[10]) for r in rows],
            )
        for table in ("users", "submissions", "jobs"):
            await conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        await conn.execute("VACUUM ANALYZE")
        stats = await conn.fetchrow(
            """SELECT sum(n) AS queued, count(*) AS users, max(n) AS heaviest
            FROM (SELECT count(*) AS n FROM jobs WHERE state = 'queued' GROUP BY user_id) AS per_user"""
        )
    out.append(
        f"load: {stats['queued']:,} queued jobs of {stats['users']:,} users (the heaviest has {stats['heaviest']:,}), "
        f"modes {', '.join(f'{m} {w:.0%}' for m, w in BACKGROUND_MODES)}, "
        f"by COPY in {time.perf_counter() - started:.0f} s"
    )
    return Loaded(problem.problem_id, problem.version, sha, cfg.users + 1, cfg.users + 2)


async def explain_claim(pool: asyncpg.Pool, capacity: int, out: list[str]) -> None:
    """EXPLAIN ANALYZE of one claim as the dispatcher makes it, rolled back."""
    sql = jobs._move_sql(jobs._fair_pick(ranked=True, reserve=True), jobs._CLAIM_SETS, steps=jobs._CLAIM_STEPS)
    async with pool.acquire() as conn:
        tx = conn.transaction()
        await tx.start()
        try:
            plan = await conn.fetch(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY ON) " + sql,
                POOL,
                "bench-probe",
                LEASE_S,
                "probe",
                capacity,
            )
        finally:
            await tx.rollback()
    lines = [r[0] for r in plan]
    out.append("EXPLAIN ANALYZE of one claim on the loaded queue (rolled back), its summary:")
    out += [f"    {line.strip()}" for line in lines if line.strip().startswith(("Planning Time", "Execution Time"))]


async def probe_claim(pool: asyncpg.Pool, capacity: int) -> float:
    """One claim on the live queue, rolled back; its time in ms."""
    async with pool.acquire() as conn:
        tx = conn.transaction()
        await tx.start()
        try:
            started = time.perf_counter()
            await jobs.claim_next(conn, POOL, "bench-probe", LEASE_S, "probe", capacity=capacity)
            return (time.perf_counter() - started) * 1000
        finally:
            await tx.rollback()


# -- the processes ---------------------------------------------------------------------------------------------


class Proc:
    """One child process, its output in a log file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], logs: Path) -> None:
        self.name = name
        self.log_path = logs / f"{name}.log"
        with open(self.log_path, "wb") as log_file:
            self.process = subprocess.Popen(argv, env=env, stdout=log_file, stderr=subprocess.STDOUT, cwd=ROOT)

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""


def base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("RUNNER_", "ARENA_", "DATABASE_URL"))}


def start_apis(cfg: Config, dsn: str, logs: Path, profile: Path | None) -> tuple[list[str], list[Proc]]:
    """The API replicas, each dispatching; returns their URLs too. `profile`: run the first under cProfile, its
    statistics written there when it stops."""
    ports = [free_port() for _ in range(cfg.replicas)]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    profiled = ["-m", "cProfile", "-o", str(profile)] if profile is not None else []
    apis = [
        Proc(
            f"api-{i + 1}",
            [sys.executable, *(profiled if i == 0 else []), "-m", "api"],
            {**base_env(), "DATABASE_URL": dsn, "ARENA_API_PORT": str(port), "ARENA_DISPATCH_OWNER": f"api-{i + 1}"},
            logs,
        )
        for i, port in enumerate(ports)
    ]
    return urls, apis


def start_runners(cfg: Config, urls: list[str], token_file: Path, logs: Path) -> tuple[list[Proc], Proc]:
    """The simulated runners' processes (spread over the replicas' URLs) and the real runner daemon."""
    sims = [
        Proc(
            f"sim-{chr(ord('a') + i)}",
            [sys.executable, str(ROOT / "bench" / "fleet_sim_runner.py"), "--api", urls[i % len(urls)],
             "--token-file", str(token_file), "--prefix", f"sim-{chr(ord('a') + i)}", "--count", str(cfg.sim_per_proc),
             "--job-ms", str(cfg.job_ms), "--jitter-ms", str(cfg.jitter_ms), "--seed", str(cfg.seed + i),
             "--record", str(logs / f"sim-{chr(ord('a') + i)}.jsonl")],
            base_env(),
            logs,
        )
        for i in range(cfg.sim_procs)
    ]  # fmt: skip
    real_env = {
        **base_env(),
        **REAL_RUNNER_ENV,
        "RUNNER_NAME": "real-cpu",
        "RUNNER_PORT": str(free_port()),
        "RUNNER_STATE_DIR": str(logs / "real-cpu-state"),
    }
    real = Proc(
        "real-cpu",
        ["nice", "-n", str(cfg.real_nice), sys.executable, "-m", "runner", "serve", "--join", urls[0],
         "--token-file", str(token_file)],
        real_env,
        logs,
    )  # fmt: skip
    return sims, real


async def wait_ready(urls: list[str], procs: list[Proc], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    async with aiohttp.ClientSession() as session:
        for url, proc in zip(urls, procs, strict=True):
            while True:
                try:
                    async with session.get(url + "/v1/ready", timeout=aiohttp.ClientTimeout(total=2)) as response:
                        if response.status == 200:
                            break
                except (aiohttp.ClientError, TimeoutError):
                    pass
                if proc.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{proc.name} did not come up:\n{proc.tail()}")
                await asyncio.sleep(0.2)


async def wait_live(pool: asyncpg.Pool, count: int, procs: list[Proc], timeout_s: float = 180.0) -> float:
    started = time.monotonic()
    while len(await fleet_store.live_runners(pool, 20.0)) < count:
        dead = [p for p in procs if p.process.poll() is not None]
        if dead or time.monotonic() - started > timeout_s:
            logs = "\n".join(f"--- {p.name}\n{p.tail()}" for p in dead or procs)
            raise RuntimeError(f"the runners did not all join within {timeout_s:.0f} s\n{logs}")
        await asyncio.sleep(0.5)
    return time.monotonic() - started


# -- where the CPU goes ----------------------------------------------------------------------------------------


def cpu_sample(parts: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds used so far by each part (its root processes and their descendants), by this process alone, and
    by the whole machine."""
    table = processes()
    sample = {name: tree_cpu_s(roots, table) for name, roots in parts.items()}
    sample["this bench process"] = table[os.getpid()][1]
    sample["machine"] = machine_busy_s()
    return sample


def cpu_report(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
    used = {name: after[name] - before[name] for name in before}
    machine = used.pop("machine")
    others = machine - sum(used.values())
    shares = [f"{name} {value / seconds:.2f}" for name, value in used.items()]
    return (
        f"  CPU in the window, in cores (of {os.cpu_count()}): "
        + ", ".join(shares)
        + f", everything else on the machine {max(others, 0.0) / seconds:.2f}; the machine {machine / seconds:.2f}"
    )


# -- the phases ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


async def db_now(pool: asyncpg.Pool) -> datetime:
    value: datetime = await pool.fetchval("SELECT clock_timestamp()")
    return value


async def throughput(
    pool: asyncpg.Pool, cfg: Config, parts: dict[str, list[int]]
) -> tuple[Window, list[float], tuple[str, dict[str, float]]]:
    """Phase 1: wait out the warm-up, then probe the claim every `probe_every` s through the window. Returns the
    window, the probes' times and where the CPU went meanwhile."""
    await asyncio.sleep(cfg.warmup)
    start, before = await db_now(pool), cpu_sample(parts)
    probes: list[float] = []
    deadline = time.monotonic() + cfg.window
    while time.monotonic() < deadline:
        probes.append(await probe_claim(pool, cfg.runners))
        await asyncio.sleep(cfg.probe_every)
    window = Window(start, await db_now(pool))
    after = cpu_sample(parts)
    cores = {name: (after[name] - before[name]) / window.seconds for name in ("API", "PostgreSQL")}
    return window, probes, (cpu_report(before, after, window.seconds), cores)


async def window_counts(pool: asyncpg.Pool, window: Window) -> tuple[int, int]:
    row = await pool.fetchrow(
        """SELECT
            (SELECT count(*) FROM job_transitions WHERE to_state = 'dispatched' AND at >= $1 AND at < $2) AS dispatched,
            (SELECT count(*) FROM jobs WHERE finished_at >= $1 AND finished_at < $2) AS finished""",
        window.start,
        window.end,
    )
    return int(row["dispatched"]), int(row["finished"])


async def top_up_heavy(pool: asyncpg.Pool, loaded: Loaded, target: int) -> int:
    """Queue heavy `test` jobs until the heavy user has `target` queued: real rows, one statement."""
    queued = await pool.fetchval(
        "SELECT count(*) FROM jobs WHERE state = 'queued' AND user_id = $1 AND mode = 'test'", loaded.heavy_id
    )
    missing = target - int(queued)
    if missing <= 0:
        return 0
    await pool.execute(
        """WITH s AS (
            INSERT INTO submissions (user_id, problem_id, problem_version, source_sha256, file_name, language, dtype,
                                     mode, gpu_type)
            SELECT $1, $2, $3, $4, 'solution.py', 'python', 'float32', 'test', $5 FROM generate_series(1, $6)
            RETURNING id
        )
        INSERT INTO jobs (submission_id, gpu_type) SELECT id, $5 FROM s ORDER BY id""",
        loaded.heavy_id,
        loaded.problem_id,
        loaded.problem_version,
        loaded.source_sha256,
        POOL,
        missing,
    )
    return missing


async def light_and_heavy(pool: asyncpg.Pool, cfg: Config, loaded: Loaded) -> tuple[Window, list[int], int]:
    """Phase 2: the heavy user kept at `heavy_queued` queued test jobs, the light user submitting now and then.
    Returns the window, the light user's job ids and how many heavy jobs were queued in all."""
    rng = random.Random(cfg.seed + 2)
    heavy_total = await top_up_heavy(pool, loaded, cfg.heavy_queued)
    await asyncio.sleep(1.0)  # the runners turn over to the heavy user's test jobs
    start = await db_now(pool)
    light: list[int] = []

    async def keep_heavy() -> None:
        nonlocal heavy_total
        while True:
            heavy_total += await top_up_heavy(pool, loaded, cfg.heavy_queued)
            await asyncio.sleep(0.2)

    feeder = asyncio.create_task(keep_heavy())
    try:
        deadline = time.monotonic() + cfg.light_window
        n = 0
        while time.monotonic() < deadline:
            await asyncio.sleep(cfg.light_every * rng.uniform(0.5, 1.5))
            n += 1
            source = SOURCE + f"# light {n}\n"
            request = SubmitRequest(
                "bench:light", "light", SLUG, check_upload("solution.py", source.encode()), POOL, mode="test"
            )
            light.append((await submit(pool, request, ROOMY)).job_id)
        await asyncio.sleep(2 * (cfg.job_ms + cfg.jitter_ms) / 1000)  # the last light job goes out
    finally:
        feeder.cancel()
        await asyncio.gather(feeder, return_exceptions=True)
    return Window(start, await db_now(pool)), light, heavy_total


def read_records(logs: Path) -> list[dict[str, object]]:
    records = []
    for path in sorted(logs.glob("sim-*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return records


async def report(
    pool: asyncpg.Pool,
    cfg: Config,
    out: list[str],
    phase1: Window,
    probes: list[float],
    cpu: tuple[str, dict[str, float]],
    phase2: Window,
    light: list[int],
    heavy_total: int,
    records: list[dict[str, object]],
) -> dict[str, float]:
    dispatched, finished = await window_counts(pool, phase1)
    rates = {"dispatch_per_s": dispatched / phase1.seconds, "finish_per_s": finished / phase1.seconds}
    out.append(
        f"phase 1, throughput: {phase1.seconds:.1f} s window, {cfg.runners} runners busy on the background queue"
    )
    out.append(f"  dispatches: {dispatched:,} = {rates['dispatch_per_s']:.1f}/s")
    out.append(f"  jobs finished: {finished:,} = {rates['finish_per_s']:.1f}/s")
    by_job = {str(r["job"]): r for r in records}
    keys = list(by_job)
    ids = [int(k.removeprefix("job-")) for k in keys]
    rows = await pool.fetch(
        "SELECT id, extract(epoch FROM dispatched_at)::float8 AS at FROM jobs WHERE id = ANY($1::bigint[])", ids
    )
    dispatched_at = {int(r["id"]): float(r["at"]) for r in rows}
    start, end = phase1.start.timestamp(), phase1.end.timestamp()
    latency = []
    gaps = []
    for key, job_id in zip(keys, ids, strict=True):
        at = dispatched_at.get(job_id)
        received = float(by_job[key]["received"])  # type: ignore[arg-type]
        if at is None or not (start <= received < end):
            continue
        latency.append((received - at) * 1000)
        gap = by_job[key]["gap_ms"]
        if gap is not None:
            gaps.append(float(gap))  # type: ignore[arg-type]
    out.append(f"  dispatch latency, claim -> POST /v1/jobs at the simulated runner: {percentiles(latency)}")
    out.append(f"  runner idle gap, done event -> next POST /v1/jobs:               {percentiles(gaps)}")
    out.append(f"  claim statement (claim_next on the live queue, rolled back):   {percentiles(probes)}")
    out.append(cpu[0])
    per_s = rates["dispatch_per_s"] or float("nan")
    api_ms, pg_ms = (cpu[1][name] / per_s * 1000 for name in ("API", "PostgreSQL"))
    out.append(f"  CPU per dispatch: {api_ms + pg_ms:.1f} ms (API {api_ms:.1f} + PostgreSQL {pg_ms:.1f})")
    rates["cpu_per_dispatch_ms"] = api_ms + pg_ms
    queued = await pool.fetchval("SELECT count(*) FROM jobs WHERE state = 'queued'")
    out.append(f"  queued at the end of phase 1: {queued:,}")
    rates["latency_p50_ms"] = statistics.median(latency) if latency else float("nan")
    rates["latency_p95_ms"] = p95(latency)
    rates["claim_p50_ms"] = statistics.median(probes) if probes else float("nan")

    waits = await pool.fetch(
        """SELECT id, extract(epoch FROM dispatched_at - created_at)::float8 * 1000 AS wait_ms FROM jobs
        WHERE id = ANY($1::bigint[]) ORDER BY id""",
        light,
    )
    undispatched = sum(1 for w in waits if w["wait_ms"] is None)
    light_ms = [float(w["wait_ms"]) for w in waits if w["wait_ms"] is not None]
    heavy_left = await pool.fetchval(
        "SELECT count(*) FROM jobs WHERE state = 'queued' AND user_id = (SELECT id FROM users WHERE external_id = "
        "'bench:heavy')"
    )
    heavy_done = await pool.fetchval(
        """SELECT count(*) FROM jobs WHERE dispatched_at >= $1 AND dispatched_at < $2
        AND user_id = (SELECT id FROM users WHERE external_id = 'bench:heavy')""",
        phase2.start,
        phase2.end,
    )
    bound = cfg.job_ms + cfg.jitter_ms
    out.append(
        f"phase 2, a light user beside a heavy one: {phase2.seconds:.1f} s, the heavy user kept at "
        f"{cfg.heavy_queued} queued test jobs ({heavy_total:,} queued in all, {heavy_done:,} dispatched in the window, "
        f"{heavy_left:,} still queued), the light user submitting one test job every {cfg.light_every:g} s ± 50 %"
    )
    out.append(f"  light user's wait, queued -> dispatched: {percentiles(light_ms)}; {undispatched} not dispatched")
    longest = max(light_ms) if light_ms else float("nan")
    out.append(
        f"  longest light wait {longest:.1f} ms against one job duration ({cfg.job_ms:g} + {cfg.jitter_ms:g} ms = "
        f"{bound:g} ms): {'met' if light_ms and not undispatched and longest <= bound else 'MISSED'}"
    )
    rates["light_max_ms"] = longest
    real = await pool.fetch(
        "SELECT state, count(*) AS n FROM jobs WHERE runner = 'real-cpu' GROUP BY state ORDER BY state"
    )
    out.append(
        "real runner daemon (real-cpu): jobs by state: " + (", ".join(f"{r['state']} {r['n']}" for r in real) or "none")
    )
    states = await jobs.count_by_state(pool)
    out.append("all jobs by state at the end: " + ", ".join(f"{k} {v:,}" for k, v in sorted(states.items())))
    return rates


async def run(cfg: Config, out: list[str], profile: Path | None = None) -> dict[str, float]:
    settings = StoreSettings()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-fleet-"))
    logs = tmp / "logs"
    logs.mkdir()
    server = None
    if settings.database_url is not None:
        admin_dsn = settings.database_url.get_secret_value()
    else:
        server = await start_embedded(tmp / "pg")
        admin_dsn = server.dsn()
    procs: list[Proc] = []
    try:
        admin = await asyncpg.connect(admin_dsn)
        await admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {DATABASE}")
        version = await admin.fetchval("SHOW server_version")
        await admin.close()
        out.append(f"server: PostgreSQL {version} ({'embedded' if server else 'DATABASE_URL'})")
        dsn = with_database(admin_dsn, DATABASE)
        conn = await asyncpg.connect(dsn)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        async with create_pool(dsn, min_size=2, max_size=4, command_timeout=120) as pool:
            loaded = await load(pool, cfg, out)
            await explain_claim(pool, cfg.runners, out)
            made = await fleet.create_join_token(pool, POOL, lifetime=timedelta(hours=2))
            token_file = tmp / "token"
            token_file.write_text(made.token + "\n")
            token_file.chmod(0o600)
            urls, apis = start_apis(cfg, dsn, logs, profile)
            procs = list(apis)
            await wait_ready(urls, apis)
            sims, real = start_runners(cfg, urls, token_file, logs)
            procs += [*sims, real]
            joined_s = await wait_live(pool, cfg.runners, procs)
            out.append(
                f"fleet: {cfg.replicas} API replica(s) dispatching, {cfg.runners} runners live after {joined_s:.1f} s "
                f"({cfg.sim_procs} processes × {cfg.sim_per_proc} simulated, 1 slot each, jobs {cfg.job_ms:g} ± "
                f"{cfg.jitter_ms:g} ms; 1 real CPU runner daemon under nice {cfg.real_nice})"
            )
            parts = {
                "API": [p.process.pid for p in apis],
                "simulated runners": [p.process.pid for p in sims],
                "real runner": [real.process.pid],
                "PostgreSQL": [server.pid] if server is not None else [],
            }
            phase1, probes, cpu = await throughput(pool, cfg, parts)
            phase2, light, heavy_total = await light_and_heavy(pool, cfg, loaded)
            for proc in [*sims, real, *apis]:
                proc.stop()
            records = read_records(logs)
            for proc in apis:
                errors = [line for line in proc.tail(2_000_000).splitlines() if " ERROR " in line]
                out.append(
                    f"{proc.name} log: {len(errors)} ERROR line(s)" + (f", first: {errors[0][:300]}" if errors else "")
                )
            return await report(pool, cfg, out, phase1, probes, cpu, phase2, light, heavy_total, records)
    finally:
        for proc in procs:
            proc.stop(timeout_s=10)
        if server is not None:
            await server.stop()
        if os.environ.get("BENCH_FLEET_KEEP"):
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--replicas", type=int, default=1, help="`arena api` processes, each dispatching")
    parser.add_argument("--sim-procs", type=int, default=6)
    parser.add_argument("--sim-per-proc", type=int, default=12)
    parser.add_argument("--job-ms", type=float, default=200.0)
    parser.add_argument("--jitter-ms", type=float, default=50.0)
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds after every runner is live")
    parser.add_argument("--window", type=float, default=60.0, help="phase 1's measured seconds")
    parser.add_argument("--light-window", type=float, default=30.0, help="phase 2's seconds")
    parser.add_argument("--light-every", type=float, default=1.0, help="the light user submits this often (± 50 %%)")
    parser.add_argument("--heavy-queued", type=int, default=500)
    parser.add_argument("--probe-every", type=float, default=0.25, help="seconds between claim probes in phase 1")
    parser.add_argument("--real-nice", type=int, default=10, help="niceness of the real runner daemon")
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--profile-api", type=Path, help="run the first API replica under cProfile, stats to this file")
    args = parser.parse_args()
    cfg = Config(
        args.users, args.jobs, args.replicas, args.sim_procs, args.sim_per_proc, args.job_ms, args.jitter_ms,
        args.warmup, args.window, args.light_window, args.light_every, args.heavy_queued, args.probe_every,
        args.real_nice, args.seed,
    )  # fmt: skip
    out = [f"fleet {datetime.now(UTC):%Y-%m-%d %H:%M} UTC", machine()]
    out.append(
        f"data: {cfg.jobs:,} queued jobs of {cfg.users:,} users, seed {cfg.seed}; commit "
        + subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    )
    try:
        asyncio.run(run(cfg, out, args.profile_api))
    finally:
        report_text = "\n".join(out) + "\n"
        print(report_text, end="")
        if args.out:
            args.out.write_text(report_text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
