"""Hostile submissions against the real daemon (a subprocess) and real sandboxed workers.

Each test checks the verdict the competitor sees, then that the runner is unharmed: the next correct job
passes. The deadlines of the test daemon are short (see conftest.TEST_DEADLINES).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from contract.wire import OUTPUT_KEEP_BYTES
from runner.clients.http import RunnerClient
from runner.host.sandbox import PACKAGE_ROOT
from runner.settings import RunnerSettings
from tests.runner.conftest import (
    TEST_DEADLINES,
    TEST_LIMITS,
    Daemon,
    assert_next_job_ok,
    job_request,
    run_remote,
    submission,
)


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found


def _error_text(result: object) -> str:
    return json.dumps(result.model_dump()) if hasattr(result, "model_dump") else str(result)


async def test_a_correct_job_passes(remote: RunnerClient) -> None:
    await assert_next_job_ok(remote)


async def test_segfault_is_a_crash_with_its_signal(remote: RunnerClient) -> None:
    result, _ = await run_remote(remote, job_request(submission("segfault.py")))
    assert result.status == "error"
    assert result.error is not None and result.error.code == "crashed"
    assert "segmentation fault" in result.error.message
    await assert_next_job_ok(remote)


async def test_exception_at_import_is_an_import_error(remote: RunnerClient) -> None:
    result, _ = await run_remote(remote, job_request(submission("import_error.py")))
    assert result.error is not None and result.error.code == "import_error"
    assert "boom at import time" in result.error.message
    await assert_next_job_ok(remote)


async def test_infinite_loop_is_killed_at_the_test_deadline(remote: RunnerClient) -> None:
    result, seconds = await run_remote(remote, job_request(submission("infinite_loop.py")))
    assert result.error is not None and result.error.code == "timeout"
    assert "test phase" in result.error.message
    limit = TEST_DEADLINES["test_timeout_s"]
    assert seconds >= limit, "the job was stopped by the test deadline, not before"
    await assert_next_job_ok(remote)


async def test_fork_bomb_is_contained_and_killed(remote: RunnerClient, daemon: Daemon) -> None:
    result, _ = await run_remote(remote, job_request(submission("fork_bomb.py")))
    assert result.error is not None and result.error.code == "timeout"
    await assert_next_job_ok(remote)
    # Nothing of the bomb survives its job. What may run is the next jobs' judges and launchers, started ahead
    # (for each: unshare, the sandbox's init and the process itself).
    ahead = RunnerSettings.model_validate({"secret": "x"}).warm_ahead_for(gpu_slot=False)  # the test daemon is CPU
    descendants = _descendants(daemon.pid)
    assert len(descendants) <= 3 * 2 * ahead, f"processes left behind: {descendants}"


async def test_stdout_flood_is_truncated(remote: RunnerClient) -> None:
    result, _ = await run_remote(remote, job_request(submission("stdout_flood.py")))
    # The solution's stdout is a capture file: the flood stops at the file-size limit (EFBIG in the import).
    assert result.error is not None and result.error.code == "import_error", result.error
    assert "File too large" in result.error.message
    (load,) = result.output
    assert load.phase == "load" and load.stdout.startswith("flood flood")
    assert len(load.stdout) == OUTPUT_KEEP_BYTES
    assert load.stdout_cut_bytes == TEST_LIMITS["max_file_mb"] * 1024 * 1024 - OUTPUT_KEEP_BYTES
    await assert_next_job_ok(remote)


async def test_disk_flood_stops_at_the_file_size_limit(remote: RunnerClient, daemon: Daemon) -> None:
    result, _ = await run_remote(remote, job_request(submission("disk_flood.py")))
    # Python ignores SIGXFSZ, so the write past RLIMIT_FSIZE fails with EFBIG inside the submission.
    assert result.error is not None and result.error.code == "import_error"
    assert "File too large" in result.error.message
    await assert_next_job_ok(remote)
    jobs = daemon.state_dir / "jobs"
    assert not list(jobs.rglob("flood.bin")), "the flood was left on disk"
    assert len(list(jobs.iterdir())) <= 2, "only the directories of the processes started ahead may remain"


async def test_no_network_from_the_sandbox(remote: RunnerClient, daemon: Daemon) -> None:
    port = daemon.url.rsplit(":", 1)[1]
    result, _ = await run_remote(remote, job_request(submission("network.py", PORT=port)))
    assert result.error is not None and result.error.code == "runtime_error"
    assert "network blocked" in result.error.message
    assert "CONNECTED" not in _error_text(result)
    await assert_next_job_ok(remote)


async def test_no_secret_in_any_environment_the_sandbox_can_read(remote: RunnerClient, daemon: Daemon) -> None:
    assert daemon.secret in Path(f"/proc/{daemon.pid}/environ").read_text(), "the test daemon must hold the secret"
    result, _ = await run_remote(remote, job_request(submission("secrets_probe.py", DAEMON_PID=daemon.pid)))
    assert result.error is not None and result.error.code == "runtime_error"
    found = json.loads(result.error.message.split("FOUND ", 1)[1])
    assert daemon.secret not in _error_text(result)
    assert not [k for k in found["environ"] if k.startswith("RUNNER_")]
    assert found["environ"]["HOME"].startswith(str(daemon.state_dir))
    assert "CUDA_VISIBLE_DEVICES" in found["environ"]
    await assert_next_job_ok(remote)


async def test_dropped_sitecustomize_and_torch_do_not_reach_the_next_job(remote: RunnerClient) -> None:
    watched = [Path(p) for p in sys.path if p and Path(p).is_dir()] + [PACKAGE_ROOT]
    before = {d: {f for f in ("sitecustomize.py", "usercustomize.py", "torch.py") if (d / f).exists()} for d in watched}
    try:
        result, _ = await run_remote(remote, job_request(submission("poison_path.py")))
        assert result.error is not None and result.error.code == "runtime_error"
        await assert_next_job_ok(remote)
        for directory, existing in before.items():
            for name in ("sitecustomize.py", "usercustomize.py", "torch.py"):
                if name not in existing:
                    assert not (directory / name).exists(), f"the job wrote {directory / name}"
    finally:  # never leave a poisoned file behind, even when the sandbox failed
        for directory, existing in before.items():
            for name in {"sitecustomize.py", "usercustomize.py", "torch.py"} - existing:
                path = directory / name
                if path.exists() and path.read_text().startswith("raise SystemExit"):
                    os.remove(path)


@pytest.mark.nvcc
async def test_compile_error_shows_the_compiler_log(remote: RunnerClient) -> None:
    request = job_request(submission("compile_error.cu"), language="cuda", file_name="solution.cu")
    result, _ = await run_remote(remote, request)
    assert result.error is not None and result.error.code == "compile_error"
    assert result.error.log is not None and "undeclared_thing" in result.error.log
    assert "solution.cu(" in result.error.log, "paths in the log are relative to the build"
    await assert_next_job_ok(remote)


@pytest.mark.nvcc
async def test_include_of_a_host_file_leaks_nothing(remote: RunnerClient) -> None:
    host_lines = [line for line in Path("/etc/passwd").read_text().splitlines() if line.strip()]
    request = job_request(submission("include_passwd.cu"), language="cuda", file_name="solution.cu")
    result, _ = await run_remote(remote, request)
    assert result.error is not None and result.error.code == "compile_error"
    text = _error_text(result)
    # The sandbox shows a synthetic /etc/passwd; no line of the host's own appears.
    assert "/nonexistent" in text
    leaked = [line for line in host_lines if line in text and "/nonexistent" not in line]
    assert leaked == []
    await assert_next_job_ok(remote)


@pytest.mark.gpu
@pytest.mark.nvcc
async def test_illegal_memory_access_is_a_clean_error(remote: RunnerClient) -> None:
    request = job_request(submission("illegal_address.cu"), language="cuda", file_name="solution.cu")
    result, _ = await run_remote(remote, request)
    assert result.status == "error" and result.error is not None
    assert result.error.code in {"runtime_error", "crashed"}
    assert "illegal memory access" in result.error.message or "illegal address" in result.error.message
    await assert_next_job_ok(remote)


@pytest.mark.gpu
@pytest.mark.nvcc
async def test_trap_in_a_kernel_is_a_clean_error(remote: RunnerClient) -> None:
    request = job_request(submission("trap.cu"), language="cuda", file_name="solution.cu")
    result, _ = await run_remote(remote, request)
    assert result.status == "error" and result.error is not None
    assert result.error.code in {"runtime_error", "crashed"}
    await assert_next_job_ok(remote)


@pytest.mark.gpu
@pytest.mark.nvcc
async def test_cuda_solution_runs_in_the_sandbox_and_is_cached(remote: RunnerClient) -> None:
    source = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.cu").read_text()
    first, _ = await run_remote(remote, job_request(source, language="cuda", file_name="solution.cu"))
    assert first.status == "passed", first.error
    second, _ = await run_remote(remote, job_request(source, language="cuda", file_name="solution.cu"))
    assert second.status == "passed", second.error
    assert second.phase_seconds["nvcc"] < first.phase_seconds["nvcc"]
