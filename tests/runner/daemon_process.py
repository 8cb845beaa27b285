"""`python -m runner serve` as a child process that a test can stop, kill -9 and start again on one state directory.

Unlike the session-wide `daemon` fixture, each `DaemonProcess` belongs to one test, which may restart it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from runner.auth import sign_headers
from tests.runner.conftest import TEST_DEADLINES, TEST_LIMITS


@dataclass
class DaemonProcess:
    """One runner daemon on `port`, with its state in `state_dir`; its output goes to `log_path`."""

    state_dir: Path
    secret: str
    port: int
    log_path: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    scheme: str = "http"
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
        env.update({f"RUNNER_{k.upper()}": str(v) for k, v in {**TEST_DEADLINES, **TEST_LIMITS}.items()})
        env.update(
            {
                "RUNNER_SECRET": self.secret,
                "RUNNER_STATE_DIR": str(self.state_dir),
                "RUNNER_PORT": str(self.port),
                "RUNNER_WARM_WORKERS": "false",
                "RUNNER_MAX_QUEUE": "4",
            }
        )
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, "the daemon is already running"
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "runner", "serve"],
                env=self.environment(),
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def wait_ready(self, ssl_context: ssl.SSLContext | None = None, timeout_s: float = 120.0) -> None:
        """Poll the signed health endpoint until it answers 200 (each poll is signed anew)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with aiohttp.ClientSession() as session:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise AssertionError(f"the daemon exited with {self.process.returncode}:\n{self.log()}")
                headers = sign_headers(self.secret.encode(), "GET", "/v1/health")
                timeout = aiohttp.ClientTimeout(total=5)
                try:
                    async with session.get(
                        self.url + "/v1/health", headers=headers, ssl=ssl_context or True, timeout=timeout
                    ) as response:
                        if response.status == 200:
                            return
                except (aiohttp.ClientConnectionError, TimeoutError):
                    pass
                if loop.time() > deadline:
                    raise AssertionError(f"the daemon did not answer within {timeout_s:.0f} s:\n{self.log()}")
                await asyncio.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send `sig` (SIGTERM: a clean shutdown; SIGKILL: a crash) and wait for the exit; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"the daemon did not stop on signal {sig}:\n{self.log()}") from None

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.stop(signal.SIGKILL)
