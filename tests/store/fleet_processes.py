"""A fleet of real processes for tests: `arena api` (the API service, dispatching) and runner daemons that join
their pool with a bootstrap token (`python -m runner serve --join URL --token-file F`), all on one test database.

Rhythms are short so that heartbeats lapse and leases expire within a test: a heartbeat every 0.5 s, a runner
silent for 3 s leaves its pool.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import aiohttp
import asyncpg

from core import fleet
from core.store import fleet as fleet_store
from core.store import jobs
from tests.runner.conftest import TEST_DEADLINES, TEST_LIMITS, free_port

HEARTBEAT_S = 0.5
HEARTBEAT_TIMEOUT_S = 3.0
FINAL = set(jobs.FINAL_STATES)


def _base_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUNNER_", "ARENA_", "DATABASE_URL"))
    }


@dataclass
class Proc:
    """One child process, its output in `log_path`."""

    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, "already running"
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(self.argv, env=self.env, stdout=log_file, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def send(self, sig: int) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{self.argv} did not stop on signal {sig}:\n{self.log()[-4000:]}") from None

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait()


@dataclass
class Fleet:
    """The API service and runners of one test, on the database `dsn`."""

    dsn: str
    tmp: Path
    procs: list[Proc] = field(default_factory=list)
    api_port: int = 0

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def api(self, owner: str = "api-1", *, dispatch: bool = True, port: int | None = None, **env: str) -> Proc:
        """An `arena api` process (not started)."""
        self.api_port = port or self.api_port or free_port()
        values = {
            "DATABASE_URL": self.dsn,
            "ARENA_API_PORT": str(self.api_port),
            "ARENA_API_DISPATCH": "true" if dispatch else "false",
            "ARENA_FLEET_HEARTBEAT_S": str(HEARTBEAT_S),
            "ARENA_FLEET_HEARTBEAT_TIMEOUT_S": str(HEARTBEAT_TIMEOUT_S),
            "ARENA_FLEET_REFRESH_S": "0.3",
            "ARENA_DISPATCH_OWNER": owner,
            "ARENA_DISPATCH_LEASE_S": "4",
            "ARENA_DISPATCH_POLL_S": "0.2",
            "ARENA_DISPATCH_STORE_RETRY_S": "0.3",
            "ARENA_DISPATCH_RUNNER_PROBE_S": "0.3",
            "ARENA_DISPATCH_RETRY_BACKOFF_S": "0",
            "ARENA_DISPATCH_RUNNER_OUTAGE_S": "120",
            **env,
        }
        proc = Proc(
            [sys.executable, "-m", "api"], {**_base_env(), **values}, self.tmp / f"api-{owner}-{len(self.procs)}.log"
        )
        self.procs.append(proc)
        return proc

    async def token(self, pool: asyncpg.Pool, gpu_type: str = "cpu") -> Path:
        """A bootstrap token for the pool `gpu_type`, in a file."""
        made = await fleet.create_join_token(pool, gpu_type, lifetime=timedelta(hours=1))
        path = self.tmp / f"token-{made.row.id}"
        path.write_text(made.token + "\n")
        path.chmod(0o600)
        return path

    def runner(self, name: str, token_file: Path, *, port: int | None = None, **env: str) -> Proc:
        """A CPU runner daemon that joins the pool of `token_file` (not started)."""
        port = port or free_port()
        state = self.tmp / f"state-{name}"
        values = {f"RUNNER_{k.upper()}": str(v) for k, v in {**TEST_DEADLINES, **TEST_LIMITS}.items()}
        values |= {
            "RUNNER_NAME": name,
            "RUNNER_PORT": str(port),
            "RUNNER_DEVICE": "cpu",
            "RUNNER_STATE_DIR": str(state),
            "RUNNER_WARM_WORKERS": "false",
            "RUNNER_DRAIN_TIMEOUT_S": "60",
            **env,
        }
        argv = [sys.executable, "-m", "runner", "serve", "--join", self.api_url, "--token-file", str(token_file)]
        proc = Proc(argv, {**_base_env(), **values}, self.tmp / f"runner-{name}-{len(self.procs)}.log")
        self.procs.append(proc)
        return proc

    async def wait_api(self, timeout_s: float = 60.0) -> None:
        """Until `/v1/ready` answers."""
        await wait_until(lambda: _ready(self.api_url), timeout_s, "the API did not answer", self.logs)

    def logs(self) -> str:
        return "\n".join(f"--- {p.log_path.name}\n{p.log()[-3000:]}" for p in self.procs)

    def close(self) -> None:
        for proc in self.procs:
            proc.close()


async def _ready(url: str) -> bool:
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url + "/v1/ready", timeout=aiohttp.ClientTimeout(total=2)) as response:
                return response.status == 200
    except (aiohttp.ClientError, TimeoutError):
        return False


async def wait_until(check, timeout_s: float, what: str, logs=lambda: "") -> None:  # type: ignore[no-untyped-def]
    """Poll the coroutine function `check` until it returns true; fail with `what` and the processes' logs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"{what} within {timeout_s:.0f} s\n{logs()}")
        await asyncio.sleep(0.1)


async def live_names(pool: asyncpg.Pool) -> set[str]:
    return {r.name for r in await fleet_store.live_runners(pool, HEARTBEAT_TIMEOUT_S)}


async def wait_live(pool: asyncpg.Pool, fleet_: Fleet, names: set[str], timeout_s: float = 120.0) -> None:
    async def check() -> bool:
        return names <= await live_names(pool)

    await wait_until(check, timeout_s, f"runners {sorted(names)} did not join", fleet_.logs)


async def wait_final(pool: asyncpg.Pool, job_id: int, fleet_: Fleet, timeout_s: float = 180.0) -> jobs.Job:
    async def check() -> bool:
        job = await jobs.get_job(pool, job_id)
        return job is not None and job.state in FINAL

    await wait_until(check, timeout_s, f"job {job_id} did not finish", fleet_.logs)
    job = await jobs.get_job(pool, job_id)
    assert job is not None
    return job
