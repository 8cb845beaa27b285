"""The public API under load: 500 Server-Sent Event streams open while submissions arrive at 100/s, measured.

    python bench/public_api.py --out bench/results/public_api.txt

What runs, all on this machine over one store (a fresh embedded PostgreSQL in a temporary directory, or a new
database on DATABASE_URL's server):
- one `arena api` process (`python -m api`), not dispatching: it serves the public routes only, with its default
  settings but the rate limits opened (`ARENA_RATE_TEST_*`), since the bench's users submit far past a person's
  quota;
- this process, the clients: `--users` users with a personal token each, `--streams` submissions made before the
  window, each followed by one event stream (`GET /v1/submissions/{id}/events`), then `--rate` submissions a second
  (`POST /v1/submissions`, multipart, mode test, open loop: each sent at its time whatever the earlier ones do) for
  `--window` seconds;
- in this process too, a stand-in for the dispatcher and the runner (no runner is needed: the submitted jobs just
  queue): through the window it takes the streamed submissions one by one, in an even rhythm, and moves each as a
  dispatcher would, through the store: claimed (`dispatched`), `running`, three cases told on the store's
  notification channel (`case_publisher`, the hook `arena api`'s dispatcher calls), and its result recorded. Each
  move is an event on its stream.

Measured:
- submit latency: from a POST's send to its 202, p50/p95/p99/max, and the rate achieved; any answer that is not
  a 202 is counted by status;
- event delivery delay: from an event's `at` (the move's transaction time in the store, or when the case was told)
  to this process reading it off its stream, p50/p95/max, for the kept events (dispatched, running, result) and the
  live `case` events;
- no event lost across reconnects: every tenth stream is dropped after its `running` event and opened again with
  `Last-Event-ID`; at the end every stream's kept event ids must equal its job's logged moves, in order, once each;
- the API process's CPU (user + system over the window, as a share of one core) and memory (RSS at the start and
  end of the window, and its peak), PostgreSQL's and this process's CPU beside it, and the machine's load
  (`uptime`) before and after.

Goals reported against: submit p95 ≤ 200 ms at 100/s, events delivered within 1 s at p95.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.commands.problems import find_problem  # noqa: E402
from bench.cpu import tree_cpu_s  # noqa: E402
from contract.wire import CaseTiming, JobEvent, SubmissionResult, TestOutcome  # noqa: E402
from core import fleet  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.results import record_result  # noqa: E402
from core.settings import StoreSettings  # noqa: E402
from core.store import jobs  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool, with_database  # noqa: E402
from core.submit.events import case_publisher  # noqa: E402
from core.tokens import create_token  # noqa: E402

DATABASE = "arena_bench_public_api"
SOURCE = (ROOT / "examples" / "vector_add.py").read_bytes()
SUBMIT_P95_GOAL_MS = 200.0
DELIVERY_P95_GOAL_S = 1.0


@dataclass
class Config:
    users: int = 100
    streams: int = 500
    rate: float = 100.0
    window: float = 30.0
    reconnect_every: int = 10
    drain_s: float = 30.0
    api_env: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamLog:
    """What one stream received: kept ids in order, each event's delay, its reconnects."""

    submission_id: int
    kept_ids: list[int] = field(default_factory=list)
    delays: list[tuple[str, float]] = field(default_factory=list)
    reconnects: int = 0
    ended: bool = False
    error: str | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def describe(values: list[float], unit: str, scale: float = 1.0) -> str:
    if not values:
        return "none"
    v = [x * scale for x in values]
    return (
        f"p50 {percentile(v, 0.5):.1f} {unit}, p95 {percentile(v, 0.95):.1f} {unit}, "
        f"p99 {percentile(v, 0.99):.1f} {unit}, max {max(v):.1f} {unit} (n = {len(v):,})"
    )


def upload() -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("problem", "vector_add")
    form.add_field("mode", "test")
    form.add_field("file", SOURCE, filename="solution.py", content_type="text/x-python")
    return form


async def post(http: aiohttp.ClientSession, url: str, token: str) -> tuple[int, float, int | None]:
    """(status, seconds, submission id) of one upload."""
    started = time.perf_counter()
    async with http.post(f"{url}/v1/submissions", data=upload(), headers={"Authorization": f"Bearer {token}"}) as r:
        body = await r.read()
        took = time.perf_counter() - started
        return r.status, took, json.loads(body)["id"] if r.status == 202 else None


async def follow(http: aiohttp.ClientSession, url: str, token: str, log: StreamLog, cfg: Config) -> None:
    """Read the stream to its `result`; every `reconnect_every`-th stream drops once after `running` and resumes."""
    after: int | None = None
    drop = log.submission_id % cfg.reconnect_every == 0
    while not log.ended:
        headers = {"Authorization": f"Bearer {token}"}
        if after is not None:
            headers["Last-Event-ID"] = str(after)
        try:
            async with http.get(
                f"{url}/v1/submissions/{log.submission_id}/events", headers=headers, timeout=aiohttp.ClientTimeout()
            ) as response:
                if response.status != 200:
                    log.error = f"{response.status}: {(await response.text())[:200]}"
                    return
                data: list[str] = []
                async for raw in response.content:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip())
                        continue
                    if line or not data:
                        continue
                    event = json.loads("\n".join(data))
                    data = []
                    now = time.time()
                    if event.get("id") is not None:
                        log.kept_ids.append(event["id"])
                        after = event["id"]
                    if event["type"] not in ("submitted", "queue") and event.get("at"):
                        sent = datetime.fromisoformat(event["at"]).timestamp()
                        log.delays.append((event["type"], now - sent))
                    if event["type"] == "result":
                        log.ended = True
                        return
                    if drop and event["type"] == "running" and not log.reconnects:
                        log.reconnects += 1
                        break  # the connection closes here; the next one resumes after `running`
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.reconnects += 1
            log.error = f"{type(exc).__name__}: {exc}"
            await asyncio.sleep(0.5)


def fake_result(spec: jobs.JobSpec) -> SubmissionResult:
    tests = [TestOutcome(index=i, name=f"n={n}", dims=[n], passed=True, message="ok") for i, n in enumerate((7, 1000))]
    timings = [
        CaseTiming(
            index=0,
            name="n=7",
            dims=[7],
            method="cpu",
            runtime_median_us=4.5,
            runtime_mean_us=6.0,
            gflops=0.0016,
            gflops_mean=0.0015,
            gbps=0.0186,
            flops=7,
            bytes=84,
            samples=1000,
            cv=0.3,
            converged=True,
        )
    ]
    return SubmissionResult(
        submission_id=str(spec.submission_id),
        problem_slug=spec.slug,
        problem_version=spec.problem_version,
        dtype=spec.dtype,  # type: ignore[arg-type]
        language=spec.language,  # type: ignore[arg-type]
        mode=spec.mode,  # type: ignore[arg-type]
        status="passed",
        device="CPU (bench)",
        tests=tests,
        timings=timings,
        geomean_gflops=0.0016,
        mean_gflops=0.0016,
    )


async def progress(pool: asyncpg.Pool, submission_ids: list[int], window: float) -> int:
    """Move each streamed submission through dispatched, running, three cases and its result, evenly over the
    window, as a dispatcher and its runner would through the store; how many finished."""
    publish = case_publisher(pool)
    loop = asyncio.get_running_loop()
    start = loop.time()
    done = 0
    for i, sub_id in enumerate(submission_ids):
        await asyncio.sleep(max(0.0, start + window * i / len(submission_ids) - loop.time()))
        [job] = await jobs.jobs_of(pool, sub_id)
        lease = await jobs.claim_job(pool, job.id, "bench", 60.0, "bench-runner")
        if lease is None or not await jobs.set_running(pool, lease):
            continue
        spec = await jobs.job_spec(pool, job.id)
        assert spec is not None
        result = fake_result(spec)
        for n, test in enumerate(result.tests):
            await publish(sub_id, JobEvent(seq=n, type="test_case", index=n, count=len(result.tests), test=test))
        await publish(sub_id, JobEvent(seq=9, type="benchmark_case", index=0, count=1, timing=result.timings[0]))
        if await record_result(pool, lease, result, "bench-runner"):
            done += 1
    return done


def cpu_seconds(proc: psutil.Process) -> float:
    with contextlib.suppress(psutil.Error):
        times = proc.cpu_times()
        return times.user + times.system
    return 0.0


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def wait_ready(url: str, api: subprocess.Popen[bytes], log_path: Path) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if api.poll() is not None:
                raise RuntimeError(f"arena api exited: {log_path.read_text()[-3000:]}")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(f"{url}/v1/ready") as r:
                    if r.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError("arena api did not become ready in 60 s")


async def measure(cfg: Config, pool: asyncpg.Pool, url: str, api_pid: int, pg_pid: int | None, out: list[str]) -> None:
    tokens = [
        (await create_token(pool, f"discord:{9000 + u}", f"user{u}", "bench", scopes="read,submit")).token
        for u in range(cfg.users)
    ]
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as http:
        # The streamed submissions, made before the window (their uploads are not in the submit figures).
        streamed: list[tuple[int, str]] = []
        for i in range(cfg.streams):
            token = tokens[i % cfg.users]
            status, _, sub_id = await post(http, url, token)
            assert status == 202 and sub_id is not None, status
            streamed.append((sub_id, token))
        logs = [StreamLog(sub_id) for sub_id, _ in streamed]
        opened = time.perf_counter()
        readers = [
            asyncio.create_task(follow(http, url, token, log, cfg))
            for (_, token), log in zip(streamed, logs, strict=True)
        ]
        while sum(1 for log in logs if log.kept_ids) < cfg.streams:
            await asyncio.sleep(0.1)
            if time.perf_counter() - opened > 120:
                break
        out.append(
            f"streams: {sum(1 for log in logs if log.kept_ids)} of {cfg.streams} open with their `submitted` event "
            f"{time.perf_counter() - opened:.1f} s after the first was opened"
        )

        api = psutil.Process(api_pid)
        me = psutil.Process()
        rss_start = api.memory_info().rss / 2**20
        cpu_api0, cpu_me0 = cpu_seconds(api), cpu_seconds(me)
        cpu_pg0 = tree_cpu_s([pg_pid]) if pg_pid else 0.0
        load_before = uptime()
        loop = asyncio.get_running_loop()
        total = int(cfg.rate * cfg.window)
        results: list[tuple[int, float, int | None]] = []
        late: list[float] = []

        async def one(i: int) -> None:
            try:
                results.append(await post(http, url, tokens[i % cfg.users]))
            except (aiohttp.ClientError, TimeoutError) as exc:
                results.append((0, float("nan"), None))
                out.append(f"  upload {i}: {type(exc).__name__}: {exc}")

        async def send_all() -> float:
            """Send every upload at its time (open loop); the seconds until the last one was answered."""
            sends: list[asyncio.Task[None]] = []
            for i in range(total):
                delay = start + i / cfg.rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    late.append(-delay)
                sends.append(asyncio.create_task(one(i)))
            await asyncio.gather(*sends)
            return loop.time() - start

        start = loop.time()
        submit_s, moved = await asyncio.gather(send_all(), progress(pool, [s for s, _ in streamed], cfg.window))
        window_s = loop.time() - start
        cpu_api = cpu_seconds(api) - cpu_api0
        cpu_me = cpu_seconds(me) - cpu_me0
        cpu_pg = (tree_cpu_s([pg_pid]) - cpu_pg0) if pg_pid else None
        rss_end = api.memory_info().rss / 2**20
        load_after = uptime()
        # The streams read their last events (the results recorded at the end of the window) before they are stopped.
        await asyncio.wait(readers, timeout=cfg.drain_s)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)

    statuses = Counter(status for status, _, _ in results)
    latencies = [took for status, took, _ in results if status == 202]
    out.append(
        f"submits: {len(results):,} sent at {cfg.rate:g}/s open loop over {submit_s:.1f} s "
        f"(achieved {len(results) / submit_s:.1f}/s); answers: "
        + ", ".join(f"{status or 'no answer'} × {n:,}" for status, n in sorted(statuses.items()))
    )
    if late:
        out.append(f"  the sender itself fell behind its schedule {len(late):,} times (max {max(late) * 1000:.0f} ms)")
    out.append(f"submit latency (send → 202): {describe(latencies, 'ms', 1000)}")
    p95 = percentile(latencies, 0.95) * 1000 if latencies else float("inf")
    met = "met" if p95 <= SUBMIT_P95_GOAL_MS else "NOT met"
    out.append(f"  goal p95 ≤ {SUBMIT_P95_GOAL_MS:.0f} ms at {cfg.rate:g}/s: {met}")

    kept = [d for log in logs for kind, d in log.delays if kind != "case"]
    cases = [d for log in logs for kind, d in log.delays if kind == "case"]
    both = kept + cases
    out.append(f"streamed submissions moved to their result in the window: {moved} of {cfg.streams}")
    out.append(f"event delivery delay, kept events (dispatched, running, result): {describe(kept, 'ms', 1000)}")
    out.append(f"event delivery delay, live case events: {describe(cases, 'ms', 1000)}")
    out.append(f"event delivery delay, all: {describe(both, 'ms', 1000)}")
    p95_delivery = percentile(both, 0.95) if both else float("inf")
    out.append(
        f"  goal p95 ≤ {DELIVERY_P95_GOAL_S:.0f} s: {'met' if p95_delivery <= DELIVERY_P95_GOAL_S else 'NOT met'}"
    )
    per_type = Counter(kind for log in logs for kind, _ in log.delays)
    out.append("events read, by type: " + ", ".join(f"{k} {v:,}" for k, v in sorted(per_type.items())))

    lost = 0
    repeated = 0
    for log in logs:
        moves = await pool.fetch(
            "SELECT t.id FROM job_transitions t JOIN jobs j ON j.id = t.job_id"
            " WHERE j.submission_id = $1 ORDER BY t.id",
            log.submission_id,
        )
        expected = [0, *(m["id"] for m in moves)]
        if log.kept_ids != expected:
            lost += len(set(expected) - set(log.kept_ids))
            repeated += len(log.kept_ids) - len(set(log.kept_ids))
    resumed = sum(1 for log in logs if log.submission_id % cfg.reconnect_every == 0)
    reconnects = sum(log.reconnects for log in logs)
    errors = Counter(log.error.split(":")[0] for log in logs if log.error)
    out.append(
        f"reconnects: {reconnects} ({resumed} streams dropped on purpose after `running` and resumed with "
        f"Last-Event-ID); streams ended with their result: {sum(log.ended for log in logs)} of {cfg.streams}; "
        f"kept events lost: {lost}, repeated: {repeated}" + (f"; stream errors: {dict(errors)}" if errors else "")
    )
    cores = os.cpu_count() or 1
    out.append(
        f"API process (pid {api_pid}) over the {window_s:.1f} s window: CPU {cpu_api:.1f} s = "
        f"{100 * cpu_api / window_s:.0f}% of one core ({cores} cores here); RSS {rss_start:.0f} MiB at the start, "
        f"{rss_end:.0f} MiB at the end, peak {peak_rss_mib(api_pid):.0f} MiB"
    )
    if cpu_pg is not None:
        out.append(f"PostgreSQL (all its processes): CPU {cpu_pg:.1f} s = {100 * cpu_pg / window_s:.0f}% of one core")
    out.append(
        f"this process ({cfg.streams} streams, the uploads, the stand-in dispatcher): CPU {cpu_me:.1f} s = "
        f"{100 * cpu_me / window_s:.0f}% of one core"
    )
    out.append(f"load before the window: {load_before}")
    out.append(f"load after the window:  {load_after}")


async def run(cfg: Config, out: list[str]) -> None:
    settings = StoreSettings()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-public-api-"))
    server = None
    api: subprocess.Popen[bytes] | None = None
    try:
        if settings.database_url is not None:
            admin_dsn = settings.database_url.get_secret_value()
        else:
            server = await start_embedded(tmp / "pg")
            admin_dsn = server.dsn()
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
        async with create_pool(dsn, min_size=2, max_size=8, command_timeout=120) as pool:
            await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
            await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=2))  # the pool exists
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNNER_", "ARENA_", "DATABASE_URL"))}
            env |= {
                "DATABASE_URL": dsn,
                "ARENA_API_PORT": str(port),
                "ARENA_API_DISPATCH": "false",
                "ARENA_RATE_TEST_BURST": "1000000",
                "ARENA_RATE_TEST_PER_HOUR": "1000000000",
                **cfg.api_env,
            }
            log_path = tmp / "api.log"
            with log_path.open("wb") as log_file:
                api = subprocess.Popen(
                    [sys.executable, "-m", "api"], cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
                )
            await wait_ready(url, api, log_path)
            pg_pid = server.pid if server is not None else None
            out.append(
                f"clients: {cfg.users} users with a personal token; {cfg.streams} event streams; uploads at "
                f"{cfg.rate:g}/s for {cfg.window:g} s; `arena api` not dispatching, its default settings but the "
                f"test-mode rate limit opened"
            )
            await measure(cfg, pool, url, api.pid, pg_pid, out)
            errors = [line for line in log_path.read_text().splitlines() if " ERROR " in line]
            out.append(f"API log: {len(errors)} ERROR line(s)" + (f", first: {errors[0][:300]}" if errors else ""))
    finally:
        if api is not None:
            api.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                api.wait(30)
        if server is not None:
            await server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=Config.users)
    parser.add_argument("--streams", type=int, default=Config.streams)
    parser.add_argument("--rate", type=float, default=Config.rate, help="submissions per second")
    parser.add_argument("--window", type=float, default=Config.window, help="seconds of submissions")
    parser.add_argument(
        "--api-env", action="append", default=[], metavar="KEY=VALUE", help="a setting of `arena api` (repeatable)"
    )
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    api_env = dict(item.split("=", 1) for item in args.api_env)
    cfg = Config(users=args.users, streams=args.streams, rate=args.rate, window=args.window, api_env=api_env)
    out = [
        f"bench/public_api.py --users {cfg.users} --streams {cfg.streams} --rate {cfg.rate:g} --window {cfg.window:g}"
        + "".join(f" --api-env {k}={v}" for k, v in api_env.items()),
        f"run at {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores; load at the start: {uptime()}",
    ]
    asyncio.run(run(cfg, out))
    text = "\n".join(out) + "\n"
    print(text, end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
