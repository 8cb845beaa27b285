"""Fixtures for the runner tests: real daemons (in this process, or as a subprocess) and real sandboxed workers.

`daemon` is one `arena runner serve` subprocess for the whole session, with its secret in its environment, so
the secret-reading tests have something real to find. `serve_app` runs `create_app` in this process on a real
port, for tests that need their own settings. Nothing is mocked.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from aiohttp import web

from contract.wire import JobRequest, SubmissionResult
from runner.auth import sign_headers
from runner.clients.http import RunnerClient
from runner.daemon.server import create_app
from runner.settings import RunnerSettings

SUBMISSIONS = Path(__file__).parent / "submissions"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Short deadlines so that hangs are caught in seconds; the compile budget also covers torch's import. The
# benchmark phase keeps room for the re-measures of a disturbed host: on a loaded 2-core CI machine an honest
# vector_add benchmark has taken over 20 s, and a hang in it is stopped sooner by its batch deadline anyway.
TEST_DEADLINES = {
    "compile_timeout_s": 60.0,
    "test_timeout_s": 4.0,
    "benchmark_timeout_s": 120.0,
    "job_timeout_s": 240.0,
}
TEST_LIMITS = {"max_file_mb": 64, "max_processes": 96, "scratch_mb": 256}


@cache
def gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    skip_nvcc = pytest.mark.skip(reason="needs nvcc on PATH")
    here = Path(__file__).parent
    for item in items:
        if here not in Path(str(item.fspath)).parents:
            continue
        if "gpu" in item.keywords and not gpu_available():
            item.add_marker(skip_gpu)
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(skip_nvcc)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def submission(name: str, **placeholders: object) -> str:
    text = (SUBMISSIONS / name).read_text(encoding="utf-8")
    for key, value in placeholders.items():
        text = text.replace(f"__{key}__", str(value))
    return text


def job_request(
    source: str, *, language: str = "python", file_name: str = "solution.py", **fields: object
) -> JobRequest:
    values: dict[str, object] = {
        "submission_id": f"test-{secrets.token_hex(6)}",
        "problem_slug": "vector_add",
        "language": language,
        "file_name": file_name,
        "source": source,
        "mode": "test",
    }
    values.update(fields)
    return JobRequest.model_validate(values)


def good_request() -> JobRequest:
    return job_request((EXAMPLES / "vector_add.py").read_text(encoding="utf-8"))


async def run_remote(client: RunnerClient, request: JobRequest) -> tuple[SubmissionResult, float]:
    """POST a job and follow its events to the result; returns the result and the seconds it took."""
    start = time.monotonic()
    accepted = await client.submit(request)
    result = await client.wait_result(accepted.job_id)
    assert result is not None, "the job was cancelled"
    return result, time.monotonic() - start


async def assert_next_job_ok(client: RunnerClient) -> None:
    """The runner is healthy after a failure: a correct job passes (how fast is bench/runner_latency.py's)."""
    result, _ = await run_remote(client, good_request())
    assert result.status == "passed", result.error


def settings_for(state_dir: Path, secret: str, **overrides: object) -> RunnerSettings:
    values: dict[str, object] = {
        "secret": secret,
        "state_dir": state_dir,
        "max_queue": 4,
        **TEST_DEADLINES,
        **TEST_LIMITS,
    }
    values.update(overrides)
    return RunnerSettings.model_validate(values)


@asynccontextmanager
async def serve_app(settings: RunnerSettings) -> AsyncIterator[str]:
    """Run the real application on a free port of 127.0.0.1; yields its base URL."""
    runner = web.AppRunner(create_app(settings), access_log=None)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
def secret() -> str:
    return secrets.token_hex(24)


@dataclass
class Daemon:
    url: str
    secret: str
    process: subprocess.Popen[bytes]
    state_dir: Path
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def client(self) -> RunnerClient:
        return RunnerClient(self.url, self.secret.encode())


def _daemon_env(state_dir: Path, secret: str, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    env.update({"RUNNER_SECRET": secret, "RUNNER_STATE_DIR": str(state_dir), "RUNNER_PORT": str(port)})
    env.update({f"RUNNER_{k.upper()}": str(v) for k, v in {**TEST_DEADLINES, **TEST_LIMITS}.items()})
    env["RUNNER_MAX_QUEUE"] = "4"
    return env


@pytest.fixture(scope="session")
def state_root() -> Iterator[Path]:
    """A directory the sandbox uid can traverse (pytest's own temporary root is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="arena-runner-tests-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def state_dir(state_root: Path) -> Path:
    path = Path(tempfile.mkdtemp(dir=state_root))
    path.chmod(0o711)
    return path


def serve_daemon(state_root: Path, name: str, **env: str) -> Iterator[Daemon]:
    """`python -m runner serve` in a subprocess with RUNNER_SECRET and the test settings in its environment (and
    `env` on top), its state in `state_root/name`; yields it once healthy and stops it after."""
    state_dir = state_root / name
    log_path = state_root / f"{name}.log"
    secret, port = secrets.token_hex(24), free_port()
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "runner", "serve"],
            env={**_daemon_env(state_dir, secret, port), **env},
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    daemon = Daemon(f"http://127.0.0.1:{port}", secret, process, state_dir, log_path)
    try:
        _wait_healthy(daemon)
        yield daemon
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def daemon(state_root: Path) -> Iterator[Daemon]:
    """`arena runner serve` in a subprocess, with RUNNER_SECRET in its environment."""
    yield from serve_daemon(state_root, "daemon")


def _wait_healthy(daemon: Daemon, timeout_s: float = 60.0) -> None:
    """Poll the signed health endpoint (plain urllib: no event loop is running in a session fixture)."""
    deadline = time.monotonic() + timeout_s
    while True:
        request = urllib.request.Request(
            daemon.url + "/v1/health", headers=sign_headers(daemon.secret.encode(), "GET", "/v1/health")
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if daemon.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the daemon did not start:\n" + daemon.log_path.read_text())
        time.sleep(0.2)


@pytest.fixture
async def remote(daemon: Daemon) -> AsyncIterator[RunnerClient]:
    async with daemon.client() as client:
        yield client
