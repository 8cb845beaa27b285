"""RUNNER_SANDBOX_REQUIRED: a runner whose sandbox is weaker than required refuses to start, with one message that
names what the host or pod lacks; where the host allows the level, it starts.

Real `python -m runner serve` processes. The weaker levels are real too: a PATH without `unshare`, and a
pod's view of the kernel made by hand (/proc/sys read-only, as a container runtime's default /proc has it, then a
user namespace mapping a range of uids), in which the kernel refuses the full sandbox's fresh /proc as it does in
a pod with a masked /proc: a /proc with locked mounts over its paths may not be mounted again in a user namespace.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runner.host.sandbox_needs import in_initial_user_namespace, masked_proc_paths
from tests.runner.conftest import free_port

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0  # a guard against a hang, not a budget: a busy machine may take long to start torch


def _runner_env(state_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    env.update(
        {
            "RUNNER_SECRET": "0123456789abcdef-test-secret",
            "RUNNER_DEVICE": "cpu",
            "RUNNER_STATE_DIR": str(state_dir),
            "RUNNER_PORT": str(free_port()),
            "RUNNER_CANARIES": "false",
            **extra,
        }
    )
    return env


def _refusal(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=START_TIMEOUT_S)


# A pod's view of the kernel, as a runtime builds it. In a private mount namespace, as real root (the runtime),
# with --mask: /proc/sys bound read-only over itself, as a runtime's default /proc has it. Then a user namespace
# with a new mount namespace, whose copy of those mounts the kernel locks (they came from a more privileged
# namespace), mapping uids and gids 0-65535 onto the host's same ids (written by this, real root, into the child's
# maps) as `hostUsers: false` maps a range. Then the runner, as root of that namespace.
POD_LIKE = textwrap.dedent(
    """
    import ctypes, os, signal, subprocess, sys
    CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
    libc = ctypes.CDLL(None, use_errno=True)
    mask, argv = sys.argv[1] == "--mask", sys.argv[2:]
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    child = os.fork()
    if child == 0:
        if libc.unshare(CLONE_NEWNS) != 0:
            os._exit(97)
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        if mask:
            subprocess.run(["mount", "--bind", "/proc/sys", "/proc/sys"], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", "/proc/sys"], check=True)
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            os._exit(98)
        os.write(ready_w, b"1")
        os.read(go_r, 1)
        os.execv(argv[0], argv)
    os.read(ready_r, 1)
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{child}/{name}", "w") as fh:
            fh.write("0 0 65536\\n")
    # The test stops "the runner" with SIGTERM: it is the child's to drain on (left to run on, it outlived the test).
    signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGTERM))
    os.write(go_w, b"1")
    _, status = os.waitpid(child, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


def _pod_like(mask: bool) -> list[str]:
    return [sys.executable, "-c", POD_LIKE, "--mask" if mask else "--plain", sys.executable, "-m", "runner", "serve"]


def _needs_root_and_unshare() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to map a range of uids into a user namespace as a pod's runtime does")
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs util-linux unshare and mount")
    trial = subprocess.run(
        [sys.executable, "-c", POD_LIKE, "--mask", shutil.which("true") or "/bin/true"],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    if trial.returncode != 0:  # root without CAP_SYS_ADMIN (a container), or mounts refused
        pytest.skip(f"cannot build a pod's view of the kernel here (status {trial.returncode}): {trial.stderr.strip()}")


@pytest.mark.parametrize("asked", [{"RUNNER_SANDBOX_REQUIRED": "full"}, {"RUNNER_REQUIRE_NAMESPACES": "1"}])
def test_without_unshare_a_runner_that_requires_full_refuses_and_says_to_install_it(
    tmp_path: Path, asked: dict[str, str]
) -> None:
    no_tools = tmp_path / "bin"
    no_tools.mkdir()
    env = _runner_env(tmp_path / "state", PATH=str(no_tools), **asked)
    done = _refusal([sys.executable, "-m", "runner", "serve"], env)
    assert done.returncode == 2, done.stderr
    assert "RUNNER_SANDBOX_REQUIRED=full" in done.stderr
    assert "allows only none" in done.stderr
    assert "`unshare` is not on the PATH" in done.stderr
    assert "Traceback" not in done.stderr
    assert "slot(s)" not in done.stderr, "it refused only after starting its slots"


def test_arena_runner_serve_refuses_the_same_way(tmp_path: Path) -> None:
    no_tools = tmp_path / "bin"
    no_tools.mkdir()
    env = _runner_env(tmp_path / "state", PATH=str(no_tools), RUNNER_SANDBOX_REQUIRED="network")
    done = _refusal([sys.executable, "-m", "arena", "runner", "serve"], env)
    assert done.returncode == 2, done.stderr
    assert "RUNNER_SANDBOX_REQUIRED=network asks for sandbox level network, but this host allows only none" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_a_masked_proc_in_a_pods_user_namespace_is_named_with_the_setting_that_unmasks_it(tmp_path: Path) -> None:
    _needs_root_and_unshare()
    env = _runner_env(tmp_path / "state", RUNNER_SANDBOX_REQUIRED="full")
    done = _refusal(_pod_like(mask=True), env)
    assert done.returncode == 2, done.stderr
    assert "asks for sandbox level full" in done.stderr
    masked = next(line for line in done.stderr.splitlines() if "/proc has masked or read-only paths (" in line)
    assert "/proc/sys" in masked
    assert "procMount: Unmasked" in done.stderr
    # What the kernel said to the full level's trial process, word for word.
    assert "the full sandbox's trial process said: unshare: mount /proc failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_same_pod_with_proc_unmasked_starts_at_the_full_level(tmp_path: Path) -> None:
    _needs_root_and_unshare()
    already = masked_proc_paths(Path("/proc/self/mountinfo").read_text())
    if already:
        pytest.skip(f"this machine's own /proc is masked ({', '.join(already)}): a container without procMount")
    env = _runner_env(tmp_path / "state", RUNNER_SANDBOX_REQUIRED="full")
    log_path = tmp_path / "runner.log"
    with open(log_path, "wb") as log_file:
        runner = subprocess.Popen(_pod_like(mask=False), env=env, cwd=REPO, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and runner.poll() is None and "slot(s)" not in log_path.read_text():
            time.sleep(0.2)
        log = log_path.read_text()
        assert runner.poll() is None, f"the runner stopped:\n{log}"
        assert "slot(s)" in log, f"the runner did not start its slots:\n{log}"
        assert "SANDBOX DEGRADED" not in log
    finally:
        if runner.poll() is None:
            runner.send_signal(signal.SIGTERM)
            try:
                runner.wait(timeout=60)
            except subprocess.TimeoutExpired:
                runner.kill()
                runner.wait()


def test_the_masked_paths_are_read_off_mountinfo() -> None:
    mountinfo = "\n".join(
        [
            "22 1 0:21 / /proc rw,relatime - proc proc rw",
            "23 22 0:5 /null /proc/kcore ro,nosuid - devtmpfs udev rw",
            "24 22 0:21 /sys /proc/sys ro,relatime - proc proc rw",
            "25 24 0:40 / /proc/sys/fs/binfmt_misc rw,relatime - binfmt_misc binfmt_misc rw",
            "26 1 0:22 / /sys rw,relatime - sysfs sysfs rw",
        ]
    )
    # binfmt_misc sits on an empty directory, which the kernel does not count as hiding anything.
    assert masked_proc_paths(mountinfo) == ["/proc/kcore", "/proc/sys"]
    assert masked_proc_paths("22 1 0:21 / /proc rw - proc proc rw") == []
    assert in_initial_user_namespace("         0          0 4294967295")
    assert not in_initial_user_namespace("         0     100000      65536")
