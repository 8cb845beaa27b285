"""What a submission can see of the host: only what it needs. Canary files are planted where earlier sandboxes
showed them (beside the secret file, under the interpreter's home, in the checkout with its .git and .env), and
a real Python submission, run through the real runner and sandbox, tries to read each of them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from contract.wire import SubmissionResult
from runner.host.executor import Executor
from runner.host.sandbox import PACKAGE_DIRS, PACKAGE_ROOT, SandboxLevel, SandboxPolicy
from runner.job.run import run_job
from tests.runner.conftest import good_request, job_request, settings_for

PROBE = """
import json, os

PATHS = {paths!r}


def _read(path):
    try:
        with open(path, "rb") as fh:
            return "read:" + fh.read(200).decode("utf-8", "replace")
    except OSError as exc:
        return "error:" + type(exc).__name__


def solution(input_a, input_b, output_c, n):
    report = {{path: _read(path) for path in PATHS}}
    report["listing"] = {{d: sorted(os.listdir(d)) if os.path.isdir(d) else None for d in {dirs!r}}}
    report["uid"] = os.getuid()
    raise RuntimeError("PROBE " + json.dumps(report))
"""


def _probe_report(result: SubmissionResult) -> dict[str, object]:
    assert result.error is not None, result
    assert "PROBE " in result.error.message, result.error
    return json.loads(result.error.message.split("PROBE ", 1)[1])


@contextlib.contextmanager
def _canary(path: Path, token: str) -> Iterator[Path | None]:
    """A file holding `token` at `path`, removed afterwards; None where this user may not write there."""
    try:
        path.write_text(f"canary {token}\n", encoding="utf-8")
    except OSError:
        yield None
        return
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _secret_folder() -> Path:
    """A folder for the runner's secret that an earlier sandbox did not hide (it emptied /tmp, not /var/tmp)."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="arena-secret-", dir=base))
    folder.chmod(0o755)
    return folder


@dataclass
class Runner:
    executor: Executor
    secret_file: Path


@pytest.fixture
async def runner(state_dir: Path) -> AsyncIterator[Runner]:
    """An executor whose secret file lies in a folder of its own, as /etc/kernel-arena/ would be."""
    folder = _secret_folder()
    try:
        secret_file = folder / "runner.secret"
        secret_file.write_text(secrets.token_hex(24), encoding="utf-8")
        settings = settings_for(state_dir, secrets.token_hex(24), secret_file=secret_file)
        executor = await Executor.from_settings(settings)
        if executor.sandbox.level is not SandboxLevel.FULL:
            pytest.skip(f"this host allows only sandbox level {executor.sandbox.level}")
        yield Runner(executor, secret_file)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def test_host_files_beside_what_jobs_need_are_invisible(runner: Runner, state_dir: Path) -> None:
    token = secrets.token_hex(16)
    secret_file = runner.secret_file
    interpreter_home = Path(sys.base_prefix).parent  # e.g. ~/.pyenv/versions, /usr/lib/pythonX's parent
    venv_home = Path(sys.prefix).parent
    with contextlib.ExitStack() as stack:
        planted = [
            stack.enter_context(_canary(secret_file.parent / "beside-the-secret.txt", token)),
            stack.enter_context(_canary(interpreter_home / f"arena-canary-{token[:8]}.txt", token)),
            stack.enter_context(_canary(venv_home / f"arena-canary-venv-{token[:8]}.txt", token)),
            stack.enter_context(_canary(PACKAGE_ROOT / f"arena-canary-{token[:8]}.txt", token)),
            stack.enter_context(_canary(Path.home() / f"arena-canary-home-{token[:8]}.txt", token)),
        ]
        paths = [str(p) for p in planted if p is not None]
        assert len(paths) >= 3, "the test could plant too few canaries to mean anything"
        paths += [str(secret_file), str(PACKAGE_ROOT / ".git" / "HEAD"), str(PACKAGE_ROOT / ".env")]
        paths += [str(PACKAGE_ROOT / "pyproject.toml"), "/etc/hostname", "/etc/shadow"]
        dirs = [str(PACKAGE_ROOT), str(secret_file.parent), str(interpreter_home), str(state_dir), "/"]
        source = PROBE.format(paths=paths, dirs=dirs)
        result = await run_job(job_request(source), executor=runner.executor)

    report = _probe_report(result)
    assert report["/etc/hostname"] == "read:arena-sandbox\n", "the probe itself must be able to read what it sees"
    for path in paths:
        if path != "/etc/hostname":
            assert str(report[path]).startswith("error:"), f"{path} is visible in the sandbox: {report[path]}"
    assert token not in result.model_dump_json()
    listing = report["listing"]
    assert isinstance(listing, dict)
    assert sorted(listing[str(PACKAGE_ROOT)] or []) == sorted(
        p for p in (*PACKAGE_DIRS, ".venv") if (PACKAGE_ROOT / p).exists() and _shown(PACKAGE_ROOT / p)
    ), "of the checkout only the package's code (and a virtual environment inside it) is shown"
    assert listing[str(secret_file.parent)] is None
    assert listing[str(state_dir)] in (None, ["jobs"]), "the runner's state shows nothing but the way to this job"


def _shown(path: Path) -> bool:
    """Whether the sandbox shows this part of the checkout: the package's code, or an install tree inside it."""
    return path.name in PACKAGE_DIRS or Path(sys.prefix).resolve().is_relative_to(path.resolve())


async def test_the_job_runs_unprivileged_with_no_capability(runner: Runner) -> None:
    executor = runner.executor
    paths = ["/proc/self/status"]
    source = PROBE.format(paths=paths, dirs=["/proc/self"]).replace("fh.read(200)", "fh.read()")
    report = _probe_report(await run_job(job_request(source), executor=executor))
    status = str(report["/proc/self/status"])
    caps = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith("Cap")}
    assert caps["CapEff"] == caps["CapPrm"] == "0000000000000000", caps
    assert "NoNewPrivs:\t1" in status
    assert report["uid"] != 0
    if os.geteuid() == 0:
        assert report["uid"] == executor.sandbox.uid_for(0), "as root, a job runs as its slot's own uid"


async def test_a_job_runs_when_its_state_dir_lies_under_a_private_directory(tmp_path: Path) -> None:
    """A root user's home (0700) and Ubuntu's default homes keep their contents from other uids: the job's uid
    must still reach its own directory, the interpreter and the package."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    executor = await Executor.from_settings(settings_for(private / "state", secrets.token_hex(24)))
    if executor.sandbox.level is not SandboxLevel.FULL:
        pytest.skip(f"this host allows only sandbox level {executor.sandbox.level}")
    result = await run_job(good_request(), executor=executor)
    assert result.status == "passed", result.error


async def test_a_pool_members_bootstrap_token_is_masked_like_the_shared_secret(state_dir: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "pool.token"
    token_file.write_text("arena-join-" + secrets.token_urlsafe(32))
    settings = settings_for(state_dir, secrets.token_hex(24), token_file=token_file, join_url="http://127.0.0.1:8800")
    policy = await asyncio.to_thread(SandboxPolicy.from_settings, settings)
    assert os.path.realpath(token_file) in policy.mask_paths
    without = await asyncio.to_thread(SandboxPolicy.from_settings, settings_for(state_dir, secrets.token_hex(24)))
    assert os.path.realpath(token_file) not in without.mask_paths
