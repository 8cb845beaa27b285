"""The sandbox's building blocks: the environment allowlist, the private directory, the isolation level."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from runner.host.sandbox import (
    PACKAGE_ROOT,
    JobDir,
    Sandbox,
    SandboxLevel,
    SandboxPolicy,
    SandboxUnavailableError,
    check_reachable,
    detect_level,
    plan_view,
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


def test_the_root_view_binds_real_directories_and_recreates_the_links_to_them(tmp_path: Path) -> None:
    real = tmp_path / "opt" / "cuda-13.0"
    (real / "lib64").mkdir(parents=True)
    (tmp_path / "opt" / "cuda").symlink_to("cuda-13.0")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(tmp_path / "opt" / "cuda" / "lib64")
    view = plan_view([str(tmp_path / "opt" / "cuda" / "lib64"), str(real), str(tmp_path / "bin" / "python")])
    assert view.binds == (str(real),), "a directory inside another bound one is not bound again"
    assert dict(view.links) == {
        str(tmp_path / "opt" / "cuda"): "cuda-13.0",
        str(tmp_path / "bin" / "python"): str(tmp_path / "opt" / "cuda" / "lib64"),
    }


def test_the_root_view_skips_what_is_missing_and_never_binds_the_whole_filesystem(tmp_path: Path) -> None:
    view = plan_view(["/", str(tmp_path / "missing"), "/proc/self", "/dev/null", str(tmp_path)])
    assert view.binds == (str(tmp_path),)


def test_the_root_view_shows_the_package_code_not_the_checkout(state_dir: Path) -> None:
    view = _policy(state_dir).view
    assert view.contains(str(PACKAGE_ROOT / "runner" / "sandbox.py"))
    assert view.contains(str(PACKAGE_ROOT / "problems"))
    for hidden in (".git", ".env", "tests", "pyproject.toml", "bot"):
        assert not view.contains(str(PACKAGE_ROOT / hidden)), hidden
    assert not view.contains(str(state_dir)), "the runner's state is never bound"
    assert view.contains(os.path.realpath(sys.executable))


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


@pytest.mark.parametrize("level", [SandboxLevel.NONE, SandboxLevel.NETWORK])
async def test_the_degraded_levels_still_run_a_job_with_its_environment_and_limits(
    state_dir: Path, level: SandboxLevel
) -> None:
    """The fallbacks where the kernel refuses a mount namespace: no fresh root, but the allowlisted environment,
    the rlimits and the tie to the owner still apply. Run as the daemon's own uid, so that the interpreter is
    reachable wherever it lives."""
    policy = replace(_policy(state_dir), uid_base=None)
    if level is SandboxLevel.NETWORK and policy.unshare is None:
        pytest.skip("needs util-linux unshare")
    sandbox = Sandbox(policy, level)
    job = JobDir.create(state_dir / "jobs", f"degraded-{level}", None)
    code = "import os, resource; print(os.environ['HOME'], resource.getrlimit(resource.RLIMIT_CORE)[0])"
    proc = await sandbox.spawn(job, [policy.python, "-I", "-c", code], slot_env={})
    output, _ = await proc.communicate()
    assert proc.returncode == 0, output
    assert output.decode().split() == [str(job.scratch / "home"), "0"]


_SESSION_NICENESS = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
from runner.host.sandbox import _before_exec
def session_line(preexec):
    return subprocess.run(["cat", "/proc/self/autogroup"], start_new_session=True, preexec_fn=preexec,
                          capture_output=True, text=True, check=True).stdout.strip()
print(session_line(None))
print(session_line(_before_exec(False, None)))
"""


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="this kernel groups no sessions")
def test_a_job_of_a_runner_started_under_nice_keeps_its_niceness_in_its_own_session() -> None:
    """A job runs in a session of its own, which the kernel schedules as its own autogroup, weighed as an equal of
    every other: a runner under `nice` would otherwise run its jobs at full weight beside the host's services."""
    root = Path(__file__).resolve().parents[2]
    lines = subprocess.run(
        ["nice", "-n", "7", sys.executable, "-c", _SESSION_NICENESS, str(root)],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert lines[0].endswith(" nice 0"), f"a new session starts at niceness 0: {lines[0]}"
    assert lines[1].endswith(" nice 7"), f"the job's session keeps the daemon's niceness: {lines[1]}"
