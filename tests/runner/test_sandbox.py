"""The sandbox's building blocks: the environment allowlist, the private directory, the isolation level."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from runner.sandbox import (
    JobDir,
    Sandbox,
    SandboxLevel,
    SandboxPolicy,
    SandboxUnavailableError,
    check_reachable,
    detect_level,
)
from runner.settings import RunnerSettings


def _policy(state_dir: Path, **overrides: object) -> SandboxPolicy:
    settings = RunnerSettings.model_validate({"state_dir": state_dir, "secret": "x" * 32, **overrides})
    return SandboxPolicy.from_settings(settings)


def test_the_environment_is_an_allowlist(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNER_SECRET", "leak-me-if-you-can-0123456789")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "leak-me-too")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    policy = _policy(state_dir, env_passthrough=["OMP_NUM_THREADS", "RUNNER_SECRET"])
    job = JobDir(state_dir / "jobs" / "j", None)
    env = Sandbox(policy, SandboxLevel.NONE).environment(job, {"CUDA_VISIBLE_DEVICES": "GPU-1"})
    assert "RUNNER_SECRET" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["OMP_NUM_THREADS"] == "3"
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-1"
    for name in ("HOME", "TMPDIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "XDG_CACHE_HOME", "CUDA_CACHE_PATH"):
        assert env[name].startswith(str(job.scratch)), name


def test_the_job_directory_is_private_and_removed(state_dir: Path) -> None:
    job = JobDir.create(state_dir / "jobs", "one", None)
    assert stat.S_IMODE(job.root.stat().st_mode) == 0o700
    assert stat.S_IMODE((state_dir / "jobs").stat().st_mode) == 0o711, "others may pass, not list"
    assert "/nonexistent" in (job.etc / "passwd").read_text()
    job.remove()
    assert not job.root.exists()


def test_hidden_directories_never_include_what_jobs_need(state_dir: Path) -> None:
    import sys

    policy = _policy(state_dir, hide_dirs=["/", sys.prefix, "/definitely/not/needed"])
    assert "/definitely/not/needed" in policy.hide_dirs
    assert "/" not in policy.hide_dirs and sys.prefix not in policy.hide_dirs
    assert str(state_dir.resolve()) in policy.hide_dirs, "the runner's own state is always hidden"


def test_an_unreachable_state_dir_is_refused_with_a_fix(tmp_path: Path) -> None:
    private = tmp_path / "private"
    (private / "state").mkdir(parents=True)
    private.chmod(0o700)
    with pytest.raises(SandboxUnavailableError, match="chmod o\\+x"):
        check_reachable(private / "state", 61000)
    check_reachable(private / "state", None)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
async def test_this_host_gets_full_isolation(state_dir: Path) -> None:
    """CI and the GPU machines allow user namespaces; a regression here would silently weaken every job."""
    level = await detect_level(_policy(state_dir), state_dir / "jobs")
    if os.environ.get("CI") or level is SandboxLevel.FULL:
        assert level is SandboxLevel.FULL
    else:
        pytest.skip(f"this host allows only sandbox level {level}")
