"""The daemon as operators run it: `arena runner serve` in its own process, and `arena submit --runner`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import aiohttp

from runner.auth import sign_headers
from runner.clients.http import RunnerClient
from runner.gpus import gpu_type_for
from tests.runner.conftest import EXAMPLES, Daemon, assert_next_job_ok


async def test_health_reports_the_slots_the_sandbox_and_no_torch(remote: RunnerClient) -> None:
    health = await remote.health()
    assert health.torch_loaded is False, "the daemon must never import torch"
    assert health.slots == len(health.gpus) or (health.device == "cpu" and health.slots == 1)
    assert health.free_slots <= health.slots
    assert health.max_queue == 4
    assert health.torch is not None
    if health.sandbox == "full":
        assert health.status == "ok"
    else:
        assert health.status == "degraded"


async def test_health_reports_the_registry_gpu_type_of_its_devices(remote: RunnerClient) -> None:
    health = await remote.health()
    for gpu in health.gpus:
        assert gpu.gpu_type == gpu_type_for(gpu.name)
    if health.device == "cpu":
        assert health.gpu_type == "cpu"
    else:
        assert health.gpu_type in {gpu.gpu_type for gpu in health.gpus}


def test_daemon_modules_do_not_import_torch() -> None:
    code = (
        "import sys, runner.daemon.server, runner.daemon.jobs, runner.job.run, runner.host.sandbox\n"
        "import runner.clients.http\n"
        "import arena.commands.runner\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


async def test_metrics_count_jobs_by_outcome_and_phase(remote: RunnerClient, daemon: Daemon) -> None:
    await assert_next_job_ok(remote)
    headers = sign_headers(daemon.secret.encode(), "GET", "/metrics")
    async with aiohttp.ClientSession() as session, session.get(daemon.url + "/metrics", headers=headers) as response:
        assert response.status == 200
        text = await response.text()
    assert 'arena_runner_jobs_total{outcome="passed"}' in text
    assert 'arena_runner_phase_seconds_count{phase="test"}' in text
    assert 'arena_runner_phase_seconds_count{phase="queue"}' in text
    assert "arena_runner_queue_depth 0" in text
    assert "arena_runner_slots_busy" in text


def test_arena_submit_uses_a_remote_runner(daemon: Daemon, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(daemon.secret + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    cmd = [sys.executable, "-m", "arena", "submit", "vector_add", str(EXAMPLES / "vector_add.py"), "--mode", "test"]
    done = subprocess.run(
        [*cmd, "--runner", daemon.url, "--secret-file", str(secret_file)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "test cases passed" in done.stdout
    assert f"the runner at {daemon.url}" in done.stderr

    wrong = tmp_path / "wrong"
    wrong.write_text("not the secret, but long enough")
    refused = subprocess.run(
        [*cmd, "--runner", daemon.url, "--secret-file", str(wrong)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert refused.returncode == 2
    assert "signature" in refused.stderr

    missing = subprocess.run([*cmd, "--runner", daemon.url], capture_output=True, text=True, timeout=120, env=env)
    assert missing.returncode == 2 and "--secret-file" in missing.stderr
