"""The container images, built here and run here: the CPU variant of both, as scripts/build-images.sh makes them.

Inside the runner image, with `buildah run --isolation chroot`: the runner's CPU tests that need neither Postgres
nor a GPU (the sandbox, its failures, the signed API), run against the image's own installed package, and an
`arena submit` of the examples through the local runner. Inside the service image: every entry point's --help,
with no torch to import. The runner's sandbox needs CAP_SYS_ADMIN for its namespaces, as in a pod
(deploy/k8s/README.md); with it the image must give jobs the full sandbox, not a degraded one.

Needs root, buildah and mmdebstrap (scripts/setup-deploy-tools.sh installs the tools); without one of them the
tests skip and say which. The first build takes minutes (the Debian base, torch); later ones reuse the cached
base and layers.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build-images.sh"
# Its own tag, so that a test run leaves an operator's images (tagged with the project's version) alone.
TAG = "test"
RUNNER_IMAGE = f"localhost/kernel-arena-runner:{TAG}"
SERVICE_IMAGE = f"localhost/kernel-arena-service:{TAG}"
# A cold build on a busy two-core machine: the Debian base, torch's 750 MB, both images' layers.
BUILD_TIMEOUT_S = 1800
# The runner's tests that run in the image: the sandbox (full isolation, what jobs can see, the job's uid), the
# failures it contains (crashes, hangs, fork bombs, floods, network, secrets), and the daemon's signed API.
RUNNER_TESTS = (
    "tests/runner/test_sandbox.py",
    "tests/runner/test_sandbox_paths.py",
    "tests/runner/test_sandbox_visibility.py",
    "tests/runner/test_failures.py",
    "tests/runner/test_auth.py",
    "tests/runner/test_messages.py",
)
# Not in the image: buildah's chroot isolation itself. The kernel refuses a new user namespace to a chrooted
# process, which the degraded level of a daemon that is not root asks for; a pod has a mount namespace of its own
# and no such limit.
DESELECTED = (
    "tests/runner/test_sandbox.py::test_the_degraded_levels_still_run_a_job_with_its_environment_and_limits[network]",
)
# Tests that skip themselves where the sandbox is degraded: in the image they must run.
MUST_RUN = ("test_this_host_gets_full_isolation", "test_host_files_beside_what_jobs_need_are_invisible")
TEST_PACKAGES = ("pytest", "pytest-asyncio", "pytest-timeout", "pytest-aiohttp")
# The image's own runner settings are a pod's (listen everywhere, its state folder); the tests choose their own.
POD_SETTINGS = ("RUNNER_HOST", "RUNNER_PORT", "RUNNER_STATE_DIR")


def missing_prerequisite() -> str | None:
    """Why the images cannot be built here, or None."""
    if os.geteuid() != 0:
        return "needs root: buildah's chroot isolation and the runner's sandbox inside it"
    for tool in ("buildah", "mmdebstrap"):
        if shutil.which(tool) is None:
            return f"needs {tool} (scripts/setup-deploy-tools.sh installs it)"
    return None


pytestmark = [
    pytest.mark.skipif(missing_prerequisite() is not None, reason=missing_prerequisite() or ""),
]


@dataclass(frozen=True)
class Images:
    runner: str
    service: str
    build_seconds: float
    log: str


@pytest.fixture(scope="module")
def images() -> Images:
    """Both images of the CPU variant, built (or brought up to date from the cache) by the build script."""
    started = time.monotonic()
    build = subprocess.run(
        [str(BUILD_SCRIPT), "--variant", "cpu", "--tag", TAG],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert build.returncode == 0, f"scripts/build-images.sh failed:\n{build.stdout}\n{build.stderr[-6000:]}"
    return Images(RUNNER_IMAGE, SERVICE_IMAGE, time.monotonic() - started, build.stdout)


@dataclass
class Container:
    """A working container of an image; `run` starts a command in it with buildah's chroot isolation."""

    name: str

    def run(
        self,
        argv: Sequence[str],
        *,
        volumes: Sequence[str] = (),
        caps: Sequence[str] = (),
        workdir: str | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess[str]:
        command = ["buildah", "run", "--isolation", "chroot"]
        for cap in caps:
            command += ["--cap-add", cap]
        for volume in volumes:
            command += ["--volume", volume]
        if workdir is not None:
            command += ["--workingdir", workdir]
        return subprocess.run(
            [*command, self.name, "--", *argv], capture_output=True, text=True, timeout=timeout, check=False
        )


@contextmanager
def container_of(image: str) -> Iterator[Container]:
    name = subprocess.run(["buildah", "from", image], capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield Container(name)
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True, check=False)


def image_config(image: str) -> dict[str, Any]:
    """The image's OCI configuration (entry point, user, environment, ports)."""
    out = subprocess.run(
        ["buildah", "inspect", "--type", "image", image], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)["OCIv1"]["config"]


@pytest.fixture(scope="module")
def runner(images: Images, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    """A container of the runner image with pytest added (the versions this suite runs with), from the package
    index as this machine's pip is configured; the image itself holds no test tools."""
    config = tmp_path_factory.mktemp("pip") / "pip.conf"
    paths = subprocess.run(
        [sys.executable, str(REPO / "deploy/images/host_pip.py"), "config", str(config)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    volumes = [f"{config}:/etc/pip.conf:ro", *(f"{path}:{path}:ro" for path in paths)]
    wanted = [f"{name}=={importlib.metadata.version(name)}" for name in TEST_PACKAGES]
    with container_of(images.runner) as container:
        install = container.run(["pip", "install", "--quiet", "--no-cache-dir", *wanted], volumes=volumes)
        assert install.returncode == 0, f"pip could not add the test tools:\n{install.stdout}\n{install.stderr}"
        yield container


def source_volumes() -> list[str]:
    """The tests, the examples and the pytest configuration, read-only: the code under test is the image's."""
    return [f"{REPO / name}:/src/{name}:ro" for name in ("tests", "examples", "pyproject.toml")]


def test_the_runner_image_runs_the_runners_cpu_tests_with_the_full_sandbox(runner: Container, tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    argv = ["env", *(f"--unset={name}" for name in POD_SETTINGS), "python", "-m", "pytest", "-p", "no:cacheprovider"]
    argv += ["-q", "-rs", "--junitxml=/out/runner.xml", *RUNNER_TESTS, *(f"--deselect={test}" for test in DESELECTED)]
    started = time.monotonic()
    result = runner.run(
        argv, volumes=[*source_volumes(), f"{tmp_path}:/out"], caps=["CAP_SYS_ADMIN"], workdir="/src", timeout=900
    )
    took = time.monotonic() - started
    assert result.returncode == 0, f"the runner's tests failed in the image ({took:.0f} s):\n{result.stdout[-8000:]}"
    suite = ET.parse(tmp_path / "runner.xml").getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("tests", "0")) >= 30, result.stdout[-3000:]
    assert (int(suite.get("failures", "1")), int(suite.get("errors", "1"))) == (0, 0)
    skipped = {case.get("name") for case in suite.iter("testcase") if case.find("skipped") is not None}
    assert not skipped & set(MUST_RUN), f"the image gave jobs a degraded sandbox: {sorted(skipped & set(MUST_RUN))}"
    # The package under test is the image's own, not the checkout's (which is not in the container).
    where = runner.run(["python", "-c", "import runner; print(runner.__file__)"], workdir="/src")
    assert where.stdout.strip() == "/opt/kernel-arena/runner/__init__.py", where.stdout


def test_arena_submit_judges_the_examples_in_the_runner_image(runner: Container) -> None:
    submit = ["arena", "submit", "vector_add", "--mode", "test", "--no-store", "--json"]
    good = runner.run(
        [*submit[:3], "/src/examples/vector_add.py", *submit[3:]], volumes=source_volumes(), caps=["CAP_SYS_ADMIN"]
    )
    assert good.returncode == 0, f"{good.stdout[-3000:]}\n{good.stderr[-3000:]}"
    result = json.loads(good.stdout)
    assert result["status"] == "passed"
    assert result["tests"] and all(case["passed"] for case in result["tests"])
    wrong = runner.run(
        [*submit[:3], "/src/examples/vector_add_wrong.py", *submit[3:]],
        volumes=source_volumes(),
        caps=["CAP_SYS_ADMIN"],
    )
    assert wrong.returncode == 1, f"{wrong.stdout[-3000:]}\n{wrong.stderr[-3000:]}"
    assert json.loads(wrong.stdout)["status"] == "failed"


# Inside the runner image: its entry point's daemon (under tini, as in a pod; `-s` since tini is not pid 1 here),
# with the image's own settings, answers the machines' probes, and a SIGTERM to tini drains it to a clean exit.
DAEMON_PROBE = """
import os, signal, subprocess, sys, time, urllib.request
env = {**os.environ, "RUNNER_SECRET": os.urandom(24).hex(), "RUNNER_DEVICE": "cpu"}
daemon = subprocess.Popen(["tini", "-s", "--", "arena", "runner", "serve"], env=env)
answers, deadline = None, time.monotonic() + 240
while answers is None and time.monotonic() < deadline and daemon.poll() is None:
    try:
        answers = [urllib.request.urlopen(f"http://127.0.0.1:8700/{path}", timeout=5).read().decode()
                   for path in ("healthz", "readyz")]
    except OSError:
        time.sleep(0.5)
daemon.send_signal(signal.SIGTERM)
print(answers, daemon.wait(timeout=120))
"""


def test_the_runner_images_daemon_answers_the_probes_and_drains_on_sigterm(runner: Container) -> None:
    probe = runner.run(["python", "-c", DAEMON_PROBE], caps=["CAP_SYS_ADMIN"], timeout=420)
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.split("\n")[-2] == "['ok', 'ok'] 0", probe.stderr[-3000:]


def test_the_runner_image_has_the_cpu_torch_the_job_uids_and_its_entry_point(runner: Container) -> None:
    probe = (
        "import torch, importlib.metadata as m; print(torch.version.cuda, sorted(d.name for d in m.distributions()))"
    )
    torch_info = runner.run(["python", "-c", probe])
    assert torch_info.returncode == 0, torch_info.stderr
    cuda, distributions = torch_info.stdout.split(" ", 1)
    assert cuda == "None", "the CPU variant must carry the CPU build of torch"
    # The SASS tools of the precision audit are host binaries of a few MB; no CUDA library may come with torch.
    sass_tools = {"nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"}
    names = ast.literal_eval(distributions.strip())
    assert [name for name in names if "nvidia" in name.lower() and name not in sass_tools] == [], names
    users = runner.run(["getent", "passwd", "61000", "61007", "10001"])
    assert [line.split(":")[0] for line in users.stdout.splitlines()] == ["arena-job0", "arena-job7", "arena"]
    config = image_config(RUNNER_IMAGE)
    assert config["Entrypoint"] == ["tini", "--", "arena", "runner", "serve"]
    assert "8700/tcp" in config["ExposedPorts"]
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["RUNNER_STATE_DIR"] == "/var/lib/arena-runner" and env["RUNNER_SANDBOX_UID"] == "61000"
    assert not [name for name in env if any(word in name for word in ("SECRET", "TOKEN", "PASSWORD"))], env


def test_the_service_image_serves_every_entry_point_without_torch(images: Images) -> None:
    commands = (["api", "--help"], ["bot", "--help"], ["web", "--help"], ["db", "migrate", "--help"])
    with container_of(images.service) as container:
        for command in commands:
            shown = container.run(["arena", *command])
            assert shown.returncode == 0 and "usage: arena" in shown.stdout, (command, shown.stdout, shown.stderr)
        api = container.run(["arena", "api", "--help"])
        assert "--no-dispatch" in api.stdout
        no_torch = container.run(["python", "-c", "import torch"])
        assert no_torch.returncode == 1 and "No module named 'torch'" in no_torch.stderr
        tools = container.run(["sh", "-c", "command -v gcc cc c++ pip; id -u"])
        assert tools.stdout.split() == ["10001"], f"a compiler or pip in the service image, or not its user: {tools}"
    config = image_config(SERVICE_IMAGE)
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["tini", "--", "arena"] and config["Cmd"] == ["api"]
