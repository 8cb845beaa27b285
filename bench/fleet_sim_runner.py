"""Simulated runners for `bench/fleet.py`: one process hosting many runners, each on its own port.

    python bench/fleet_sim_runner.py --api URL --token-file F --prefix sim-a --count 12 --record FILE

Each simulated runner does what a real daemon does towards the core, through the same code where it can:
- it joins the pool of the bootstrap token, registers its address and a made-up CPU `RunnerHardware` (pool `cpu`,
  one slot) and sends heartbeats, with `runner.daemon.membership.Membership`;
- it answers the runner API the dispatcher calls (`runner.clients.remote`, `runner.clients.http`), checking every
  request's signature with its own secret through `runner.auth.Verifier` and its middleware: `POST /v1/jobs`
  (202 `JobAccepted`, idempotent on the job key), `GET /v1/jobs/{id}/events` (NDJSON `accepted`, `test_case`,
  `done`), `GET /v1/jobs/{id}` (`JobStatus` with the `SubmissionResult`), `GET /v1/health`.

A job "runs" for `--job-ms` ± `--jitter-ms` (uniform) and passes. No code is run.

`--record` gets one JSON line per job received: the runner, the job key, the wall-clock time the POST arrived
(`time.time()`, comparable with the store's `dispatched_at` on this machine), and the runner's idle gap: the time
from the `done` event of its previous job to this POST (monotonic clock), None for its first job. Lines are written
as the process stops (SIGTERM), so that writing them costs the run nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import platform
import random
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contract.wire import (  # noqa: E402
    CaseTiming,
    HealthInfo,
    JobAccepted,
    JobEvent,
    JobRequest,
    JobStatus,
    RunnerHardware,
    SubmissionResult,
    TestOutcome,
)
from runner.auth import Verifier, make_auth_middleware  # noqa: E402
from runner.daemon.membership import Membership, MembershipError, read_token  # noqa: E402

log = logging.getLogger("fleet_sim_runner")

NDJSON = "application/x-ndjson"
STREAM_KEEPALIVE_S = 15.0


@dataclass
class SimJob:
    """One job a simulated runner holds: its events so far, and a condition that wakes the readers."""

    id: str
    request: JobRequest
    created_at: float
    events: list[JobEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: float | None = None
    finished_at: float | None = None
    result: SubmissionResult | None = None

    def add(self, event: JobEvent) -> None:
        self.events.append(event)
        self.changed.set()

    @property
    def state(self) -> str:
        return "done" if self.result is not None else ("running" if self.started_at is not None else "queued")


def simulated_result(request: JobRequest, seconds: float) -> SubmissionResult:
    """A passing verdict for the job, shaped as the CPU runner's: one test case, and its timing unless mode test."""
    dims = [1_000_000]
    test = TestOutcome(index=0, name="n=1000000", dims=dims, passed=True, message="ok")
    timings = []
    if request.mode != "test":
        runtime = 100.0 + random.random()
        timings.append(
            CaseTiming(
                index=0, name="n=1000000", dims=dims, method="cpu", runtime_median_us=runtime, runtime_mean_us=runtime,
                gflops=1e6 / runtime / 1e3, gflops_mean=1e6 / runtime / 1e3, gbps=12e6 / runtime / 1e3,
                flops=1_000_000, bytes=12_000_000, samples=100, cv=0.01, converged=True,
            )
        )  # fmt: skip
    score = timings[0].gflops if timings else None
    return SubmissionResult(
        submission_id=request.submission_id,
        problem_slug=request.problem_slug,
        problem_version=request.problem_version or 1,
        dtype=request.dtype,
        language=request.language,
        mode=request.mode,
        status="passed",
        device="cpu (simulated)",
        tests=[test],
        timings=timings,
        geomean_gflops=score,
        mean_gflops=score,
        phase_seconds={"run": seconds},
    )


class SimRunner:
    """One simulated runner: its pool membership, its one slot, its jobs, and what it recorded."""

    slots = 1

    def __init__(self, name: str, api_url: str, job_s: float, jitter_s: float, rng: random.Random) -> None:
        self.name = name
        self.api_url = api_url
        self.job_s = job_s
        self.jitter_s = jitter_s
        self.rng = rng
        self.jobs: dict[str, SimJob] = {}  # by job key (the dispatcher's idempotency key)
        self.by_id: dict[str, SimJob] = {}
        self._numbers = itertools.count(1)  # runner job ids, never reused (finished jobs are forgotten)
        self.records: list[dict[str, Any]] = []
        self.last_done: float | None = None  # monotonic
        # What Membership's heartbeat reads of a job manager.
        self.busy = 0
        self.queue: list[str] = []
        self.draining = False
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def hardware(self) -> RunnerHardware:
        return RunnerHardware(
            device="cpu", gpu_type="cpu", slots=self.slots, python=platform.python_version(), sandbox="full"
        )

    def app(self, secret: bytes) -> web.Application:
        verifier = Verifier(secret)  # no replay log: nothing survives this process anyway
        app = web.Application(middlewares=[make_auth_middleware(verifier, {"/v1/openapi.json"})])
        app.add_routes(
            [
                web.post("/v1/jobs", self.post_job),
                web.get("/v1/jobs/{job_id}", self.get_job),
                web.get("/v1/jobs/{job_id}/events", self.job_events),
                web.get("/v1/health", self.health),
            ]
        )
        return app

    async def post_job(self, request: web.Request) -> web.Response:
        received_wall, received = time.time(), time.monotonic()
        job_request = JobRequest.model_validate_json(await request.read())
        key = job_request.submission_id
        known = self.jobs.get(key)
        if known is not None:
            accepted = JobAccepted(job_id=known.id, submission_id=key, state=known.state, created=False)  # type: ignore[arg-type]
            return web.json_response(text=accepted.model_dump_json(), status=200)
        gap = None if self.last_done is None or self.busy else (received - self.last_done) * 1000
        self.records.append({"runner": self.name, "job": key, "received": received_wall, "gap_ms": gap})
        job = SimJob(id=f"{self.name}-{next(self._numbers)}", request=job_request, created_at=received_wall)
        self.jobs[key] = job
        self.by_id[job.id] = job
        job.add(JobEvent(seq=1, type="accepted", message="accepted"))
        self.busy += 1
        task = asyncio.create_task(self._run(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        accepted = JobAccepted(job_id=job.id, submission_id=key, state="running", created=True)
        return web.json_response(text=accepted.model_dump_json(), status=202)

    async def _run(self, job: SimJob) -> None:
        job.started_at = time.time()
        seconds = max(self.job_s + self.rng.uniform(-self.jitter_s, self.jitter_s), 0.0)
        await asyncio.sleep(seconds)
        result = simulated_result(job.request, seconds)
        job.add(JobEvent(seq=2, type="test_case", index=0, count=1, test=result.tests[0]))
        job.result = result
        job.finished_at = time.time()
        self.busy -= 1
        self.last_done = time.monotonic()
        job.add(JobEvent(seq=3, type="done", message="passed", result=result))

    def _job(self, request: web.Request) -> SimJob:
        job = self.by_id.get(request.match_info["job_id"])
        if job is None:
            raise web.HTTPNotFound(text="no such job")
        return job

    async def get_job(self, request: web.Request) -> web.Response:
        job = self._job(request)
        status = JobStatus(
            job_id=job.id,
            submission_id=job.request.submission_id,
            state=job.state,  # type: ignore[arg-type]
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            last_seq=len(job.events),
            result=job.result,
        )
        return web.json_response(text=status.model_dump_json())

    async def job_events(self, request: web.Request) -> web.StreamResponse:
        job = self._job(request)
        index = int(request.query.get("after", "0"))
        response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-store"})
        await response.prepare(request)
        while True:
            if index < len(job.events):
                batch = job.events[index:]
                index += len(batch)
                await response.write("".join(e.model_dump_json() + "\n" for e in batch).encode())
            if job.result is not None and index >= len(job.events):
                break
            job.changed.clear()
            if index < len(job.events):
                continue
            try:
                await asyncio.wait_for(job.changed.wait(), STREAM_KEEPALIVE_S)
            except TimeoutError:
                await response.write(b"\n")
        await response.write_eof()
        # The dispatcher has read the result: the job need not be kept (a long run would hold 100k of them).
        self.by_id.pop(job.id, None)
        self.jobs.pop(job.request.submission_id, None)
        return response

    async def health(self, request: web.Request) -> web.Response:
        info = HealthInfo(
            status="degraded",
            name=self.name,
            device="cpu",
            gpu_count=0,
            gpu_type="cpu",
            slots=self.slots,
            free_slots=self.slots - self.busy,
            queue_depth=0,
            max_queue=0,
            sandbox="none",
            torch_loaded=False,
        )
        return web.json_response(text=info.model_dump_json())

    async def serve(self, token: str, session: aiohttp.ClientSession, ready: asyncio.Event) -> None:
        """Join, serve, register, send heartbeats until cancelled; then leave the pool."""
        membership = Membership(self.api_url, self.name, self.url, session)
        joined = await membership.join(token)
        app_runner = web.AppRunner(self.app(joined.secret.encode()), access_log=None, handle_signals=False)
        await app_runner.setup()
        await web.SockSite(app_runner, self._sock).start()
        try:
            await membership.register(self.hardware())
            ready.set()
            await membership.run(self)  # type: ignore[arg-type]  # it reads busy, queue and draining only
        finally:
            await membership.leave()
            await app_runner.cleanup()


async def serve_all(args: argparse.Namespace) -> int:
    token = read_token(args.token_file)
    rng = random.Random(args.seed)
    runners = [
        SimRunner(f"{args.prefix}-{i:02d}", args.api, args.job_ms / 1000, args.jitter_ms / 1000, rng)
        for i in range(1, args.count + 1)
    ]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # One session for the membership calls of all; the connections to the API are few and short.
    async with aiohttp.ClientSession() as session:
        readies = [asyncio.Event() for _ in runners]
        tasks = [asyncio.create_task(r.serve(token, session, e)) for r, e in zip(runners, readies, strict=True)]
        waiting = asyncio.gather(*(e.wait() for e in readies))
        await asyncio.wait({waiting, *tasks}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        if failed:
            exc = failed[0].exception()
            print(f"{args.prefix}: a simulated runner could not join: {exc}", file=sys.stderr, flush=True)
            for t in tasks:
                t.cancel()
            return 1
        print(f"{args.prefix}: {len(runners)} simulated runners registered", flush=True)
        await stop.wait()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if args.record is not None:
        with open(args.record, "w", encoding="utf-8") as out:
            for runner in runners:
                out.writelines(json.dumps(r) + "\n" for r in runner.records)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api", required=True, help="the API service's URL, e.g. http://127.0.0.1:8800")
    parser.add_argument("--token-file", type=Path, required=True, help="a bootstrap token of the `cpu` pool")
    parser.add_argument("--prefix", default="sim", help="runner names are <prefix>-01, <prefix>-02, ...")
    parser.add_argument("--count", type=int, default=12, help="simulated runners in this process")
    parser.add_argument("--job-ms", type=float, default=200.0, help="how long a job runs")
    parser.add_argument("--jitter-ms", type=float, default=50.0, help="uniform jitter around --job-ms")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--record", type=Path, help="write one JSON line per job received here on exit")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve_all(args))
    except MembershipError as exc:
        print(f"{args.prefix}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
