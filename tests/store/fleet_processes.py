"""A fleet of real processes for tests: `arena api` (the API service, dispatching) and runner daemons that join
their pool with a bootstrap token (`python -m runner serve --join URL --token-file F`), all on one test database.

Rhythms are short so that heartbeats lapse and leases expire within a test: a heartbeat every 0.5 s, a runner
silent for 3 s leaves its pool. Runners time no canaries here (their own tests do): a runner measuring them takes
no job for several seconds, which would only slow every test down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import aiohttp
import asyncpg

from core import fleet
from core.settings import RateLimitSettings
from core.store import fleet as fleet_store
from core.store import jobs, ratelimits, submissions
from core.submit.intake import SubmitReceipt, SubmitRequest, submit
from core.submit.uploads import check_upload
from runner.auth import sign_headers
from tests.runner.conftest import TEST_DEADLINES, TEST_LIMITS, free_port

HEARTBEAT_S = 0.5
HEARTBEAT_TIMEOUT_S = 3.0
FINAL = set(jobs.FINAL_STATES)

# Correct, and slow enough (three test cases, 0.7 s each) to be interrupted mid-job.
SLOW_SOLUTION = b"""import time
import torch


def solution(input_a, input_b, output_c, n):
    time.sleep(0.7)
    torch.add(input_a, input_b, out=output_c)
"""
FAST_SOLUTION = b"""import torch


def solution(input_a, input_b, output_c, n):
    torch.add(input_a, input_b, out=output_c)
"""
# Mode `test` runs the three test cases of vector_add and times nothing: three case rows per result.
TEST_CASES = 3
# Rate limits roomy enough for every test, refilling so slowly that a token given back, or taken twice, shows.
RATES = RateLimitSettings(test_burst=50, test_per_hour=0.001)


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("RUNNER_", "ARENA_", "DATABASE_URL"))}


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

    def exit_status(self, timeout_s: float = 60.0) -> int:
        """Wait for the process to end by itself (a drained runner leaves on its own); its exit status."""
        assert self.process is not None
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.argv} did not end within {timeout_s:.0f} s:\n{self.log()[-4000:]}") from None

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
    """The API service and runners of one test, on the database `dsn`; files (logs, tokens, runners' state) go
    under `tmp`."""

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
            "RUNNER_CANARIES": "false",
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


async def live_names(pool: asyncpg.Pool, *, active: bool = False) -> set[str]:
    """The runners in their pools now; `active`: only those taking new jobs (not draining)."""
    live = await fleet_store.live_runners(pool, HEARTBEAT_TIMEOUT_S)
    return {r.name for r in live if not active or r.state == "active"}


async def wait_live(pool: asyncpg.Pool, fleet_: Fleet, names: set[str], timeout_s: float = 120.0) -> None:
    """Until every runner of `names` is in its pool and takes jobs."""

    async def check() -> bool:
        return names <= await live_names(pool, active=True)

    await wait_until(check, timeout_s, f"runners {sorted(names)} did not join", fleet_.logs)


async def wait_final(pool: asyncpg.Pool, job_id: int, fleet_: Fleet, timeout_s: float = 180.0) -> jobs.Job:
    async def check() -> bool:
        job = await jobs.get_job(pool, job_id)
        return job is not None and job.state in FINAL

    await wait_until(check, timeout_s, f"job {job_id} did not finish", fleet_.logs)
    job = await jobs.get_job(pool, job_id)
    assert job is not None
    return job


@contextlib.asynccontextmanager
async def fleet_on(dsn: str) -> AsyncIterator[Fleet]:
    """A Fleet whose processes are killed at the end, whatever happens. Its directory is one the sandbox's uid
    can traverse (pytest's own temporary root is private to root)."""
    tmp = Path(tempfile.mkdtemp(prefix="arena-fleet-"))
    tmp.chmod(0o755)
    made = Fleet(dsn, tmp)
    try:
        yield made
    finally:
        made.close()
        # Captured by pytest, and shown only when the test failed: what each process said.
        print(made.logs())
        shutil.rmtree(tmp, ignore_errors=True)


async def start_fleet(pool: asyncpg.Pool, fleet_: Fleet, names: Iterable[str], **api_env: str) -> dict[str, Proc]:
    """Start the API service (dispatching) and one CPU runner per name; return the runners once all are live."""
    fleet_.api(**api_env).start()
    await fleet_.wait_api()
    token = await fleet_.token(pool, "cpu")
    runners = {name: fleet_.runner(name, token) for name in names}
    for proc in runners.values():
        proc.start()
    await wait_live(pool, fleet_, set(runners))
    return runners


async def submit_test(
    pool: asyncpg.Pool, user: str, source: bytes = SLOW_SOLUTION, *, variant: int = 0
) -> SubmitReceipt:
    """A `test` run of vector_add on the `cpu` pool from `discord:<user>`; `variant` makes its source unique."""
    data = source + f"# variant {variant}\n".encode()
    return await submit(
        pool,
        SubmitRequest(f"discord:{user}", user, "vector_add", check_upload("s.py", data), "cpu", mode="test"),
        RATES,
    )


async def wait_state(
    pool: asyncpg.Pool, job_id: int, states: set[str], fleet_: Fleet, timeout_s: float = 180.0
) -> jobs.Job:
    """Until the job is in one of `states`; the job then."""

    async def check() -> bool:
        job = await jobs.get_job(pool, job_id)
        return job is not None and job.state in states

    await wait_until(check, timeout_s, f"job {job_id} did not reach {sorted(states)}", fleet_.logs)
    job = await jobs.get_job(pool, job_id)
    assert job is not None
    return job


async def runner_row(pool: asyncpg.Pool, name: str) -> fleet_store.RunnerRow:
    """The latest join under `name`."""
    row = await fleet_store.find_runner(pool, name)
    assert row is not None, f"no runner {name} joined"
    return row


async def runner_secret(pool: asyncpg.Pool, name: str) -> bytes:
    """The credential `name` got when it joined (what a dispatcher signs its calls to it with)."""
    secret = await fleet_store.runner_secret(pool, (await runner_row(pool, name)).id)
    assert secret is not None, f"runner {name} has no secret"
    return secret.encode()


async def runner_metrics(pool: asyncpg.Pool, name: str) -> dict[str, float]:
    """The runner's `/metrics`, read with its own credential: each sample line's name and labels, and its value."""
    row = await runner_row(pool, name)
    assert row.url is not None
    headers = sign_headers(await runner_secret(pool, name), "GET", "/metrics")
    async with aiohttp.ClientSession() as session:
        async with session.get(row.url + "/metrics", headers=headers) as response:
            assert response.status == 200, await response.text()
            text = await response.text()
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


async def available_tokens(pool: asyncpg.Pool, user_id: int) -> float:
    """The user's `test` tokens available now, under `RATES`."""
    limit = RATES.for_mode("test")
    return await ratelimits.peek(pool, user_id, "test", limit.burst, limit.per_hour)


async def assert_ended_once(
    pool: asyncpg.Pool, receipts: Iterable[SubmitReceipt], *, state: str = "done"
) -> dict[int, jobs.Job]:
    """Every submission has one job, which reached a final state once (`state`), was claimed once per attempt,
    and whose result (its case rows) is stored once; each user was charged one token per submission that ran
    (a job the service failed gives its token back). Returns the jobs by job id."""
    receipts = list(receipts)
    ended: dict[int, jobs.Job] = {}
    for receipt in receipts:
        assert [j.id for j in await jobs.jobs_of(pool, receipt.submission_id)] == [receipt.job_id]
        job = await jobs.get_job(pool, receipt.job_id)
        assert job is not None and job.state == state, (receipt, job)
        moves = await jobs.transitions(pool, receipt.job_id)
        finals = [m for m in moves if m.to_state in FINAL]
        assert [m.to_state for m in finals] == [state], moves
        # Each claim (a lease) starts from the queue, never while another lease holds the job; every counted attempt
        # was a claim (a claim the runner never got is not counted, and its number is used again).
        held = False
        for move in moves:
            if (move.from_state, move.to_state) == ("queued", "dispatched"):
                assert not held, moves
            held = move.to_state in ("dispatched", "running")
        claims = [m.attempt for m in moves if (m.from_state, m.to_state) == ("queued", "dispatched")]
        assert sorted(set(claims)) == list(range(1, job.attempts + 1)), moves
        sub = await submissions.get_submission(pool, receipt.submission_id)
        assert sub is not None
        cases = await submissions.case_results(pool, receipt.job_id)
        if state == "done":
            assert (sub.status, sub.result_job_id, sub.runner) == ("passed", job.id, job.runner), sub
            assert [(c.kind, c.idx, c.passed) for c in cases] == [("test", i, True) for i in range(TEST_CASES)]
        else:
            assert sub.status == "error" and cases == [], sub
        ended[job.id] = job
    charged = Counter(r.user_id for r in receipts)
    for receipt in receipts:
        if ended[receipt.job_id].state == "failed":
            charged[receipt.user_id] -= 1  # the service's fault: the token went back
    for user_id, count in charged.items():
        left = await available_tokens(pool, user_id)
        assert abs(left - (RATES.test_burst - count)) < 0.5, (user_id, left, count)
    return ended
