"""docs/operations.md's single-host section, followed on a fresh clone: the commands are read from the guide itself,
so the guide and this test cannot drift apart.

The guide marks its code blocks by what they need:
- ```` ```bash single-host ````: run here, in order, in one bash with `set -euo pipefail`;
- ```` ```bash single-host-root ````: needs a real root on a real machine (packages, `useradd`, PostgreSQL's own
  roles, `chgrp`, copying units into /etc/systemd): not run; what it sets up is made here instead (a directory for
  /etc/kernel-arena, a database on the test's PostgreSQL) and its user and paths are checked against the units;
- ```` ```bash single-host-install ````: the install (`scripts/setup.sh`): not run. The clone reuses this
  checkout's .venv (a link), whose installation of the project is this checkout's, editable: a fresh install takes
  minutes and the network. The clone supplies every file the commands name (units, examples).

The guide's fixed places become the test's own: /opt/kernel-arena the clone in a temporary directory,
/etc/kernel-arena and /var/lib/kernel-arena-runner directories beside it, the ports free ones, and the guide's
DATABASE_URL a fresh database on the test's PostgreSQL. Two commands are stand-ins on PATH: `runuser -u USER --`
runs the command as the test's own user, and `systemctl enable --now UNIT` starts the unit's ExecStart with its
EnvironmentFile as a background process, as systemd would, and records its pid so the test can stop it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.runner.conftest import free_port
from tests.store.conftest import empty_dsn, pg_dsn  # noqa: F401  (fixtures, found by name)

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
UNITS = ROOT / "deploy" / "systemd"
GUIDE_DSN = "postgresql://kernel-arena@/kernel_arena?host=/run/postgresql"
SERVICE_USER = "kernel-arena"
INSTALL_DIR = "/opt/kernel-arena"
PORTS = ("8800", "8080", "8700", "8081")
# Long enough for a busy 2-core machine: the runner measures its canaries as it joins before it takes the job.
GUIDE_TIMEOUT_S = 480

RUNUSER = """#!/bin/sh
# runuser -u USER -- COMMAND...: the command, as the test's own user.
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""

SYSTEMCTL = """#!{python}
# systemctl [enable --now|start] UNIT...: each unit's ExecStart with its EnvironmentFile, in the background.
import json, os, shlex, subprocess, sys
from pathlib import Path

places = json.loads(os.environ["GUIDE_PLACES"])
units, logs = Path(os.environ["GUIDE_UNITS"]), Path(os.environ["GUIDE_LOGS"])
def placed(text):
    for old, new in places.items():
        text = text.replace(old, new)
    return text
args = [a for a in sys.argv[1:] if a != "--now"]
if not args or args[0] == "daemon-reload":
    sys.exit(0)
if args[0] not in ("enable", "start"):
    sys.exit(f"systemctl stand-in: {{args[0]}} is not supported")
for name in args[1:]:
    name = name if name.endswith(".service") else name + ".service"
    unit = {{}}
    for line in (units / name).read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            unit[key.strip()] = placed(value.strip())
    env = {{k: v for k, v in os.environ.items() if not k.startswith(("GUIDE_", "ARENA_", "RUNNER_", "DATABASE_URL"))}}
    for line in Path(unit["EnvironmentFile"]).read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            env[key.strip()] = value.strip()
    with open(logs / (name + ".log"), "ab") as log:
        child = subprocess.Popen(shlex.split(unit["ExecStart"]), env=env, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd="/", start_new_session=True)
    (logs / (name + ".pid")).write_text(str(child.pid))
    print(f"started {{name}} (pid {{child.pid}})")
"""


@dataclass(frozen=True)
class Block:
    tag: str
    text: str


def guide_blocks(markdown: str) -> list[Block]:
    """The guide's single-host code blocks, in order, with their tag."""
    found = re.finditer(r"^```bash (single-host(?:-root|-install)?)\n(.*?)^```$", markdown, re.S | re.M)
    return [Block(match.group(1), match.group(2)) for match in found]


def unit_settings(name: str) -> dict[str, str]:
    settings = {}
    for line in (UNITS / f"{name}.service").read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            settings[key] = value
    return settings


def placed(text: str, places: dict[str, str]) -> str:
    for old, new in places.items():
        text = re.sub(rf"(?<![\w/]){re.escape(old)}(?!\w)", new, text) if old.isdigit() else text.replace(old, new)
    return text


def test_the_guides_single_host_blocks_are_marked() -> None:
    tags = [block.tag for block in guide_blocks(GUIDE.read_text(encoding="utf-8"))]
    assert tags.count("single-host-install") == 1
    assert tags.count("single-host") >= 4
    assert "single-host-root" in tags


def test_the_guide_makes_the_user_paths_and_environment_files_the_units_expect() -> None:
    blocks = guide_blocks(GUIDE.read_text(encoding="utf-8"))
    root = "\n".join(b.text for b in blocks if b.tag == "single-host-root")
    everything = "\n".join(b.text for b in blocks)
    assert re.search(rf"useradd .*\b{SERVICE_USER}$", root, re.M), "the guide creates no service user"
    for name in ("kernel-arena-api", "kernel-arena-web", "kernel-arena-bot", "kernel-arena-runner"):
        unit = unit_settings(name)
        assert unit["ExecStart"].startswith(f"{INSTALL_DIR}/.venv/bin/arena "), name
        if name != "kernel-arena-runner":  # the runner runs as root: its jobs get uids of their own
            assert unit["User"] == SERVICE_USER, name
        env_file = unit["EnvironmentFile"]
        assert f"cat > {env_file} <<" in everything, f"the guide writes no {env_file} for {name}"
    assert f'git clone --quiet "$ARENA_REPO" {INSTALL_DIR}' in everything
    assert GUIDE_DSN in everything


@contextlib.contextmanager
def started_units(logs: Path) -> Iterator[None]:
    """Stops, at the end, every process the systemctl stand-in started (each in its own process group)."""
    try:
        yield
    finally:
        pids = [int(p.read_text()) for p in logs.glob("*.pid")]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for pid in pids:
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(pid, os.WNOHANG) != (0, 0):
                        break
                except ChildProcessError:  # not our child: the stand-in started it; poll whether it is gone
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        break
                time.sleep(0.2)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_a_fresh_clone_follows_the_single_host_section_to_a_passing_fleet_submission(
    empty_dsn: str,  # noqa: F811
) -> None:
    for tool in ("git", "curl"):
        if shutil.which(tool) is None:
            pytest.skip(f"the guide's commands need {tool}, which is not installed")
    venv = ROOT / ".venv"
    if not (venv / "bin" / "arena").exists():
        pytest.skip(f"no installed environment at {venv} to reuse (scripts/setup.sh makes it)")
    # A directory the runner's sandboxed jobs (other uids) can traverse, as /opt is.
    tmp = Path(tempfile.mkdtemp(prefix="arena-guide-"))
    tmp.chmod(0o755)
    try:
        _follow_the_guide(tmp, empty_dsn)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _follow_the_guide(tmp: Path, dsn: str) -> None:
    clone, etc, logs, bin_dir = tmp / "opt" / "kernel-arena", tmp / "etc", tmp / "logs", tmp / "bin"
    for directory in (etc, logs, bin_dir, clone.parent):
        directory.mkdir(parents=True)
    places = {
        GUIDE_DSN: dsn,
        INSTALL_DIR: str(clone),
        "/etc/kernel-arena": str(etc),
        "/var/lib/kernel-arena-runner": str(tmp / "runner-state"),
    } | {port: str(free_port()) for port in PORTS}
    (bin_dir / "runuser").write_text(RUNUSER)
    (bin_dir / "systemctl").write_text(SYSTEMCTL.format(python=sys.executable))
    for stand_in in ("runuser", "systemctl"):
        (bin_dir / stand_in).chmod(0o755)

    steps = []
    for block in guide_blocks(GUIDE.read_text(encoding="utf-8")):
        if block.tag == "single-host":
            steps.append(placed(block.text, places))
        elif block.tag == "single-host-install":
            steps.append(f"ln -s {ROOT / '.venv'} {clone / '.venv'}\n")
    script = tmp / "single-host.sh"
    script.write_text("set -euo pipefail\nset -x\n" + "\n".join(steps))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
    env |= {
        "PATH": f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}",
        "ARENA_REPO": str(ROOT),
        "GUIDE_PLACES": json.dumps(places),
        "GUIDE_UNITS": str(clone / "deploy" / "systemd"),
        "GUIDE_LOGS": str(logs),
    }
    with started_units(logs):
        try:
            done = subprocess.run(
                ["bash", str(script)], env=env, capture_output=True, text=True, timeout=GUIDE_TIMEOUT_S, cwd=tmp
            )
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"the guide's commands ran past {GUIDE_TIMEOUT_S} s\n{_logs(logs)}") from exc
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"the guide's commands failed ({done.returncode}):\n{said[-6000:]}\n{_logs(logs)}"

    # A fresh clone, the services the guide started, and what its checks printed.
    assert (clone / ".git").is_dir() and (clone / "examples" / "vector_add.py").is_file()
    assert {p.name for p in logs.glob("*.pid")} == {
        "kernel-arena-api.service.pid",
        "kernel-arena-web.service.pid",
        "kernel-arena-runner.service.pid",
    }
    assert (etc / "cpu.token").stat().st_mode & 0o077 == 0, "the token file is readable by others"
    # The guide's `arena db migrate` made the schema on an empty database.
    assert re.search(r"^applied V001 ", done.stdout, re.M), done.stdout
    assert done.stdout.count("ok\n") >= 3, done.stdout  # the API's /readyz and /healthz, the web's /readyz
    runners = re.search(r"^\S+\s+\d+\s+cpu\s+active\s+1\s", done.stdout, re.M)
    assert runners, f"no active runner in pool cpu:\n{done.stdout}"
    assert re.search(r"^vector-addition .* test .*\nall 3 test cases passed$", done.stdout, re.M), done.stdout


def _logs(logs: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(logs.glob("*.log")))
