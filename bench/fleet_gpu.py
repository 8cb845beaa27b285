"""Two runner daemons, one per GPU, join one pool and share a queue of real submissions; one is killed mid-job.

On a machine with two GPUs: an embedded store, `python -m api` (the API service, dispatching), and two
`python -m runner serve --join` daemons (RUNNER_GPUS=0 and 1) that join the pool of the GPUs' type with one
bootstrap token. Real submissions (CUDA and Triton examples, benchmark mode, several users) go into the queue.
Once a job runs on the second runner, that runner is killed with SIGKILL: its job must re-run on the first
runner and end exactly once, and every other job must end once too.

    python3 bench/fleet_gpu.py [--jobs 12]

Prints the GPUs, each job's runner, attempts, state and score, the killed job's history, and a verdict line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import fleet  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.settings import RateLimitSettings  # noqa: E402
from core.store import fleet as fleet_store  # noqa: E402
from core.store import jobs  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool  # noqa: E402
from core.submit.intake import SubmitRequest, submit  # noqa: E402
from core.submit.uploads import check_upload  # noqa: E402
from problems.registry import builtin_problems  # noqa: E402
from runner.gpus import gpu_type_for  # noqa: E402

ROOMY = RateLimitSettings(test_burst=1000, benchmark_burst=1000, ranked_burst=1000, profile_burst=1000)
EXAMPLES = [("matmul", "matmul_naive.cu"), ("vector_add", "vector_add.cu"), ("matmul", "matmul_triton.py")]
FINAL = set(jobs.FINAL_STATES)


def gpus() -> list[str]:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, check=True
    ).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(argv, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)


def stop_processes(procs: dict[str, subprocess.Popen[bytes]], root: Path, prefix: str) -> None:
    """SIGTERM every process, wait for each (SIGKILL after 60 s), and keep its log in $OUT as `prefix_name.log`."""
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for name, proc in procs.items():
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log = root / f"{name}.log"
        if log.exists() and os.environ.get("OUT"):
            shutil.copy(log, Path(os.environ["OUT"]) / f"{prefix}_{name}.log")


async def wait_for(check: Callable[[], Awaitable[bool]], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not await check():
        if time.monotonic() > deadline:
            raise SystemExit(f"FAILED: {what} within {timeout_s:.0f} s")
        await asyncio.sleep(0.2)


async def main(jobs_wanted: int) -> int:
    names = gpus()
    if len(names) < 2:
        print(f"needs two GPUs; nvidia-smi lists {names}")
        return 2
    pool_type = gpu_type_for(names[0])
    print(f"GPUs: {names}; pool `{pool_type}`")
    root = Path(tempfile.mkdtemp(prefix="fleet-gpu-"))
    server = await start_embedded(root / "pg")
    dsn = server.dsn()
    conn = await asyncpg.connect(dsn)
    await migrate(conn)
    await conn.close()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        async with create_pool(dsn, min_size=1, max_size=4) as pool:
            for problem in builtin_problems().values():  # as the bot does: former slugs resolve too
                await sync_problem(pool, ProblemSpec.builtin(problem))
            made = await fleet.create_join_token(pool, pool_type, lifetime=timedelta(hours=1))
            token = root / "token"
            token.write_text(made.token)
            token.chmod(0o600)
            api_port = free_port()
            api_env = {
                "DATABASE_URL": dsn,
                "ARENA_API_PORT": str(api_port),
                "ARENA_FLEET_HEARTBEAT_S": "1",
                "ARENA_FLEET_HEARTBEAT_TIMEOUT_S": "5",
                "ARENA_FLEET_REFRESH_S": "0.5",
                "ARENA_DISPATCH_OWNER": "gpu-api",
                "ARENA_DISPATCH_RETRY_BACKOFF_S": "0",
                "ARENA_DISPATCH_RUNNER_PROBE_S": "0.5",
            }
            procs["api"] = start([sys.executable, "-m", "api"], api_env, root / "api.log")
            for index, name in enumerate(("gpu-a", "gpu-b")):
                env = {
                    "RUNNER_NAME": name,
                    "RUNNER_PORT": str(free_port()),
                    "RUNNER_DEVICE": "gpu",
                    "RUNNER_GPUS": f'["{index}"]',
                    "RUNNER_STATE_DIR": str(root / f"state-{name}"),
                }
                argv = [sys.executable, "-m", "runner", "serve", "--join", f"http://127.0.0.1:{api_port}"]
                procs[name] = start([*argv, "--token-file", str(token)], env, root / f"{name}.log")

            async def both_live() -> bool:
                live = await fleet_store.live_runners(pool, 5.0)
                return {"gpu-a", "gpu-b"} <= {r.name for r in live}

            await wait_for(both_live, 300, "both runners joined")
            for row in await fleet_store.list_runners(pool):
                gpu_names = [g["name"] for g in (row.hardware or {}).get("gpus", [])]
                print(
                    f"runner {row.name}: {row.state}, {row.slots} slot(s), {gpu_names}, sandbox "
                    f"{(row.hardware or {}).get('sandbox')}"
                )
            receipts = []
            for i in range(jobs_wanted):
                slug, example = EXAMPLES[i % len(EXAMPLES)]
                source = (ROOT / "examples" / example).read_bytes()
                source += (b"\n// run %d\n" if example.endswith(".cu") else b"\n# run %d\n") % i
                user = f"user{i % 3}"
                receipts.append(
                    await submit(
                        pool,
                        SubmitRequest(
                            f"local:{user}", user, slug, check_upload(example, source), pool_type, mode="benchmark"
                        ),
                        ROOMY,
                    )
                )
            print(f"queued {len(receipts)} submissions")

            killed: list[int] = []

            async def running_on_b() -> bool:
                row = await pool.fetchrow(
                    "SELECT id FROM jobs WHERE runner = 'gpu-b' AND state = 'running' ORDER BY id LIMIT 1"
                )
                if row is not None:
                    killed.append(row["id"])
                return row is not None

            await wait_for(running_on_b, 600, "a job running on gpu-b")
            procs["gpu-b"].send_signal(signal.SIGKILL)
            procs["gpu-b"].wait()
            print(f"killed gpu-b (SIGKILL) while it ran job {killed[0]}")

            async def all_final() -> bool:
                states = await pool.fetch("SELECT state FROM jobs")
                return all(r["state"] in FINAL for r in states)

            await wait_for(all_final, 1200, "every job finished")
            rows = await pool.fetch(
                """SELECT j.id, j.submission_id, j.state, j.attempts, j.runner, s.status, s.score, s.file_name
                FROM jobs j JOIN submissions s ON s.id = j.submission_id ORDER BY j.id"""
            )
            print(f"{'job':>4} {'file':<18} {'runner':<6} {'att':>3} {'state':<6} {'status':<8} score")
            for r in rows:
                score = f"{r['score']:.1f}" if r["score"] is not None else "-"
                print(
                    f"{r['id']:>4} {r['file_name']:<18} {r['runner'] or '-':<6} {r['attempts']:>3} {r['state']:<6} "
                    f"{r['status']:<8} {score}"
                )
            history = await pool.fetch(
                "SELECT from_state, to_state, attempt, owner, note FROM job_transitions WHERE job_id = $1 ORDER BY id",
                killed[0],
            )
            print(f"job {killed[0]}'s history:")
            for h in history:
                print(f"  {h['from_state']} -> {h['to_state']} (attempt {h['attempt']}, {h['owner']}): {h['note']}")
            finals = await pool.fetch(
                """SELECT job_id, count(*) AS n FROM job_transitions WHERE to_state IN ('done', 'failed', 'error')
                GROUP BY job_id"""
            )
            once = all(f["n"] == 1 for f in finals) and len(finals) == len(rows)
            victim = next(r for r in rows if r["id"] == killed[0])
            ok = once and victim["state"] == "done" and victim["runner"] == "gpu-a" and victim["attempts"] == 2
            passed = sum(1 for r in rows if r["status"] == "passed")
            print(
                f"every job ended exactly once: {once}; {passed}/{len(rows)} passed; killed job re-ran on "
                f"{victim['runner']} in {victim['attempts']} attempts: {'OK' if ok else 'FAILED'}"
            )
            return 0 if ok else 1
    finally:
        stop_processes(procs, root, "fleet_gpu")
        await server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=12)
    sys.exit(asyncio.run(main(parser.parse_args().jobs)))
