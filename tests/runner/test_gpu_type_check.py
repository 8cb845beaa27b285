"""A remote runner whose health reports another GPU type than the one it is configured with gets no job.

The runner is the real daemon (`serve_app`), once on this host's CPU and once seeing the GPU a stand-in
`nvidia-smi` lists (there is no GPU here); the bot's side is the real `RemoteRunner`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

# The bot's side: GPU hosts run the runner tests without the bot's packages (discord.py, asyncpg).
pytest.importorskip("discord")
pytest.importorskip("asyncpg")

from contract.errors import RunnerRefusedError, RunnerUnavailableError
from contract.wire import GpuInfo, HealthInfo, ValidateRequest
from runner.clients.http import RunnerClient
from runner.clients.remote import RemoteRunner, gpu_type_mismatch
from tests.runner.conftest import good_request, serve_app, settings_for

H100_NAME = "NVIDIA H100 80GB HBM3"


def _health(device: str, gpus: list[GpuInfo], gpu_type: str | None) -> HealthInfo:
    return HealthInfo(
        status="ok",
        name="r",
        device=device,  # type: ignore[arg-type]
        gpu_count=len(gpus),
        gpus=gpus,
        gpu_type=gpu_type,
        slots=max(len(gpus), 1),
        free_slots=1,
        queue_depth=0,
        max_queue=4,
        sandbox="full",
        torch_loaded=False,
    )


def _gpu(index: int, name: str, gpu_type: str | None) -> GpuInfo:
    return GpuInfo(index=index, name=name, uuid=f"GPU-{index}", capability="9.0", gpu_type=gpu_type)


def test_a_runner_reporting_its_configured_type_or_an_old_spelling_of_it_is_accepted() -> None:
    health = _health("gpu", [_gpu(0, H100_NAME, "h100")], "h100")
    assert gpu_type_mismatch("h100", health) is None
    assert gpu_type_mismatch("h100-80gb-hbm3", health) is None
    assert gpu_type_mismatch("cpu", _health("cpu", [], "cpu")) is None


def test_a_runner_reporting_another_type_is_refused_with_both_types_named() -> None:
    h200 = _health("gpu", [_gpu(0, "NVIDIA H200", "h200")], "h200")
    reason = gpu_type_mismatch("h100", h200)
    assert reason == "configured as GPU type `h100`, but it reports `h200` (NVIDIA H200)"
    reason = gpu_type_mismatch("h100", _health("cpu", [], "cpu"))
    assert reason == "configured as GPU type `h100`, but it reports `cpu` (no GPU)"
    assert gpu_type_mismatch("cpu", _health("gpu", [_gpu(0, H100_NAME, "h100")], "h100")) is not None


def test_a_daemon_that_predates_the_type_is_checked_by_its_gpu_names() -> None:
    old = _health("gpu", [_gpu(0, "NVIDIA H200", None), _gpu(1, "NVIDIA H200", None)], None)
    assert gpu_type_mismatch("h200", old) is None
    assert gpu_type_mismatch("h100", old) is not None
    mixed = _health("gpu", [_gpu(0, H100_NAME, None), _gpu(1, "NVIDIA H200", None)], None)
    reason = gpu_type_mismatch("h100", mixed)
    assert reason is not None and "several types" in reason
    # On a CPU it says nothing usable: trusted, as before the check existed.
    assert gpu_type_mismatch("h100", _health("cpu", [], None)) is None


@pytest.fixture
async def cpu_daemon(state_dir: Path, secret: str) -> AsyncIterator[str]:
    async with serve_app(settings_for(state_dir, secret, device="cpu")) as url:
        yield url


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _remote(name: str, gpu_type: str, url: str, secret: str, session: aiohttp.ClientSession) -> RemoteRunner:
    return RemoteRunner(name, gpu_type, 1, RunnerClient(url, secret.encode(), session=session))


async def test_a_cpu_runner_configured_as_h100_gets_no_job_and_the_cpu_one_runs_it(
    cpu_daemon: str, secret: str, session: aiohttp.ClientSession
) -> None:
    wrong = _remote("h100-box", "h100", cpu_daemon, secret, session)
    right = _remote("cpu-box", "cpu", cpu_daemon, secret, session)

    # The dispatcher's two questions: may it take a job now, and what happens when one is handed to it.
    assert await wrong.probe() is False
    assert wrong.refusal == "configured as GPU type `h100`, but it reports `cpu` (no GPU)"
    with pytest.raises(RunnerUnavailableError) as refused:
        await wrong.run("job-1", good_request(), lambda _event: None)
    # Not posted: the job goes back to the queue at no attempt's cost, and the daemon never saw it.
    assert refused.value.accepted is False and "h100" in str(refused.value)
    assert await wrong.attach("job-1", lambda _event: None) is None
    with pytest.raises(RunnerRefusedError, match="is refused, so the self-test did not run"):
        await wrong.validate(ValidateRequest(problem_source="x = 1"))

    assert await right.probe() is True and right.refusal is None
    result = await right.run("job-2", good_request(), lambda _event: None)
    assert result.status == "passed", result.error
    # How /mod runners shows a fleet runner refused by its pool: tests/bot/test_e2e_runner_gpu_type.py.


FAKE_SMI = """#!/bin/sh
# Stands in for nvidia-smi on a host without a GPU: answers the daemon's device query with one H200.
echo "0, GPU-00000000-0000-0000-0000-000000000000, NVIDIA H200, 9.0, 580.159.04, 143771"
"""


@pytest.fixture
def h200_smi(tmp_path: Path) -> Iterator[None]:
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{smi.parent}{os.pathsep}{path}"
    try:
        yield
    finally:
        os.environ["PATH"] = path


async def test_a_gpu_runner_is_held_to_the_type_of_the_gpu_it_reports(
    h200_smi: None, state_dir: Path, secret: str, session: aiohttp.ClientSession
) -> None:
    # The daemon starts no job here: its health is all this test needs of the GPU it believes it has.
    async with serve_app(settings_for(state_dir, secret, device="gpu")) as url:
        health = await RunnerClient(url, secret.encode(), session=session).health()
        assert [(g.name, g.gpu_type) for g in health.gpus] == [("NVIDIA H200", "h200")]
        assert health.gpu_type == "h200"

        h100 = _remote("h100-box", "h100", url, secret, session)
        assert await h100.probe() is False
        assert h100.refusal == "configured as GPU type `h100`, but it reports `h200` (NVIDIA H200)"
        h200 = _remote("h200-box", "h200", url, secret, session)
        assert await h200.probe() is True and h200.refusal is None
