"""A runner's membership of its pool: join with a bootstrap token, register, send heartbeats, drain, leave.

`arena runner serve --join URL --token-file F` starts here. Before it serves, the runner exchanges the pool's
bootstrap token for a credential of its own (`join`): the secret it checks dispatchers' calls with, and signs its
own calls to the API with. Once its slots are up it registers the address where dispatchers reach it
(`--advertise`, `RUNNER_ADVERTISE_URL`; in Kubernetes, the pod's address) and its hardware, then sends a
heartbeat every `heartbeat_s`. A heartbeat answered "left" (the core did not hear from it for too long: a
partition, a pause) registers again. On SIGTERM it drains: it refuses new jobs, says so in its heartbeats, lets
the jobs in hand finish and their results be read, then leaves its pool.

The runner never holds database credentials: everything goes through the API service.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import platform
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from pydantic import BaseModel, ValidationError

from contract.errors import ApiError
from contract.wire import (
    GpuHardware,
    RunnerHardware,
    RunnerHeartbeat,
    RunnerJoined,
    RunnerJoinRequest,
    RunnerRegistration,
    RunnerStanding,
)
from runner.auth import runner_sign_headers
from runner.daemon.canary import CanaryError, measure_canaries
from runner.daemon.jobs import JobManager
from runner.daemon.slots import slots_gpu_type
from runner.gpus import gpu_type_for
from runner.host.compile import nvcc_path, nvcc_version
from runner.host.devices import package_version
from runner.host.sandbox import SandboxLevel

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 10.0
# A drifted canary is measured again this long after, once no job runs: back-to-back runs are the one state seen to
# make a healthy GPU read slow (docs/canaries.md).
CONFIRM_AFTER_S = 30.0
NVIDIA_SMI_TIMEOUT_S = 20.0


class MembershipError(Exception):
    """The runner cannot join or stay in its pool; the message says what to fix."""


class RefusedByPoolError(MembershipError):
    """The core refused this runner for good (its hardware is not the pool's, or its credential was revoked)."""


@dataclass(frozen=True)
class ApiAnswer:
    status: int
    body: bytes

    def error(self) -> str:
        try:
            return ApiError.model_validate_json(self.body).error.message
        except ValidationError:
            return self.body[:300].decode(errors="replace") or f"HTTP {self.status}"


def read_token(path: Path) -> str:
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise MembershipError(f"Cannot read the bootstrap token file {path}: {exc.strerror}.") from exc
    if len(token) < 16:
        raise MembershipError(f"The bootstrap token in {path} is too short; paste the whole token the operator made.")
    return token


def _smi_clocks() -> dict[str, tuple[float | None, float | None]]:
    """Per GPU UUID: its maximum SM clock (MHz) and power limit (W), from nvidia-smi; empty where it fails."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {}
    try:
        out = subprocess.run(
            [smi, "--query-gpu=uuid,clocks.max.sm,power.limit", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, tuple[float | None, float | None]] = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            found[parts[0]] = (_number(parts[1]), _number(parts[2]))
    return found


def _cuda_version() -> str | None:
    """The CUDA version the driver supports, from nvidia-smi's banner ("CUDA Version: 13.0")."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi], capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"CUDA Version:\s*([0-9.]+)", out)
    return found.group(1) if found else None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _ncu_version() -> str | None:
    ncu = shutil.which("ncu")
    if ncu is None:
        return None
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return next((line.split("Version", 1)[1].strip() for line in out.splitlines() if "Version" in line), None)


def describe_hardware(manager: JobManager) -> RunnerHardware:
    """What this runner serves with. Blocking (nvidia-smi, nvcc, ncu): call it through `asyncio.to_thread`."""
    clocks = _smi_clocks() if manager.gpus else {}
    # The GPUs its slots use (RUNNER_GPUS may leave some of the host's to another runner).
    used = {slot.env.get("CUDA_VISIBLE_DEVICES") for slot in manager.slots if slot.is_gpu}
    gpus = [
        GpuHardware(
            index=g.index,
            name=g.name,
            uuid=g.uuid,
            gpu_type=gpu_type_for(g.name),
            memory_mib=g.memory_mib,
            max_sm_clock_mhz=clocks.get(g.uuid, (None, None))[0],
            power_limit_w=clocks.get(g.uuid, (None, None))[1],
        )
        for g in manager.gpus
        if g.uuid in used
    ]
    level = manager.executor.sandbox.level if manager.executor is not None else SandboxLevel.NONE
    is_gpu = any(slot.is_gpu for slot in manager.slots)
    return RunnerHardware(
        device="gpu" if is_gpu else "cpu",
        gpu_type=slots_gpu_type(manager.slots),
        gpus=gpus if is_gpu else [],
        slots=max(len(manager.slots), 1),
        rank_slots=[slot.ranks for slot in manager.rank_slots],
        topology=manager.topology,
        driver=manager.gpus[0].driver if manager.gpus else None,
        cuda=_cuda_version() if manager.gpus else None,
        nvcc=nvcc_version() if nvcc_path() else None,
        ncu=_ncu_version(),
        torch=package_version("torch"),
        triton=package_version("triton"),
        python=platform.python_version(),
        sandbox=level.value,  # type: ignore[arg-type]
    )


class Membership:
    """One runner's standing in its pool, kept up by `run()` until `leave()`."""

    def __init__(self, api_url: str, name: str, advertise_url: str, session: aiohttp.ClientSession) -> None:
        self.api_url = api_url.rstrip("/")
        self.name = name
        self.advertise_url = advertise_url
        self._session = session
        self.joined: RunnerJoined | None = None
        self.standing: RunnerStanding | None = None
        self.draining = False
        self._hardware: RunnerHardware | None = None
        self._calls = asyncio.Lock()

    @property
    def secret(self) -> bytes:
        assert self.joined is not None, "join first"
        return self.joined.secret.encode()

    async def _call(self, method: str, path: str, model: BaseModel | None, *, signed: bool) -> ApiAnswer:
        body = model.model_dump_json().encode() if model is not None else b""
        # One call at a time, signed as it is sent: the API accepts a runner's signed request only if it is newer
        # than the last one it accepted, so two calls overtaking each other would get the later-signed one refused.
        async with self._calls:
            headers = {"Content-Type": "application/json"} if body else {}
            if signed:
                assert self.joined is not None
                headers |= runner_sign_headers(self.joined.runner_id, self.secret, method, path, body)
            timeout = aiohttp.ClientTimeout(total=CALL_TIMEOUT_S)
            async with self._session.request(
                method, self.api_url + path, data=body or None, headers=headers, timeout=timeout
            ) as response:
                return ApiAnswer(response.status, await response.read())

    async def join(self, token: str) -> RunnerJoined:
        """Exchange the bootstrap token for this runner's credential. Raises MembershipError."""
        try:
            answer = await self._call(
                "POST", "/v1/runners/join", RunnerJoinRequest(token=token, name=self.name), signed=False
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise MembershipError(
                f"Cannot reach the API at {self.api_url} to join: {exc or type(exc).__name__}."
            ) from exc
        if answer.status != 201:
            raise MembershipError(f"The API at {self.api_url} refused to let this runner join: {answer.error()}")
        self.joined = RunnerJoined.model_validate_json(answer.body)
        log.info("joined pool %s as runner %d", self.joined.gpu_type, self.joined.runner_id)
        return self.joined

    async def register(self, hardware: RunnerHardware) -> RunnerStanding:
        """Register this runner's address and hardware. Raises RefusedByPoolError when the pool refuses it."""
        assert self.joined is not None
        self._hardware = hardware
        registration = RunnerRegistration(url=self.advertise_url, hardware=hardware)
        answer = await self._call("PUT", f"/v1/runners/{self.joined.runner_id}", registration, signed=True)
        if answer.status in (401, 403, 409):
            raise RefusedByPoolError(f"The pool refused this runner: {answer.error()}")
        if answer.status != 200:
            raise MembershipError(f"Registration failed (HTTP {answer.status}): {answer.error()}")
        self.standing = RunnerStanding.model_validate_json(answer.body)
        log.info("registered at %s in pool %s", self.advertise_url, self.standing.gpu_type)
        return self.standing

    async def heartbeat(self, manager: JobManager) -> RunnerStanding | None:
        """One heartbeat; registers again when the core says this runner left. None when the API did not answer."""
        assert self.joined is not None
        # Draining to stop, or paused while the canaries hold the devices: either way no new job should come.
        paused = self.draining or manager.draining
        beat = RunnerHeartbeat(
            state="draining" if paused else "active", busy_slots=manager.busy, queue_depth=len(manager.queue)
        )
        path = f"/v1/runners/{self.joined.runner_id}/heartbeat"
        try:
            answer = await self._call("POST", path, beat, signed=True)
            if answer.status == 409 and self._hardware is not None and not self.draining:
                log.warning("the core says this runner left its pool (%s); registering again", answer.error())
                return await self.register(self._hardware)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("heartbeat failed: %s", exc or type(exc).__name__)
            return None
        if answer.status in (401, 403):
            raise RefusedByPoolError(f"The pool no longer accepts this runner: {answer.error()}")
        if answer.status != 200:
            log.warning("heartbeat answered HTTP %d: %s", answer.status, answer.error())
            return None
        standing = RunnerStanding.model_validate_json(answer.body)
        if self.standing is not None and standing.quarantined != self.standing.quarantined:
            log.warning("quarantine %s: %s", "on" if standing.quarantined else "lifted", standing.note)
        self.standing = standing
        return standing

    async def run(self, manager: JobManager) -> None:
        """Send heartbeats until cancelled, at the pool's rhythm."""
        assert self.joined is not None
        while True:
            started = time.monotonic()
            try:
                await self.heartbeat(manager)
            except RefusedByPoolError as exc:
                log.error("%s; this runner stops taking jobs", exc)
                manager.draining = True
                return
            except (MembershipError, ValidationError, json.JSONDecodeError) as exc:
                log.warning("heartbeat: %s", exc)
            await asyncio.sleep(max(self.joined.heartbeat_s - (time.monotonic() - started), 0.05))

    async def report_canaries(self, manager: JobManager, python: str) -> None:
        """Time the canary kernels on every slot, with no job running (new ones wait meanwhile), and report each.
        Best effort: a canary that cannot run or be reported is logged, and the runner goes on serving."""
        assert self.joined is not None
        paused = not manager.draining
        if paused:
            manager.draining = True  # no new job while the canaries hold the devices
        try:
            with contextlib.suppress(MembershipError, ValidationError):
                await self.heartbeat(manager)  # dispatchers stop choosing this runner now, not at the next beat
            while not manager.idle:
                await asyncio.sleep(0.5)
            for slot in manager.slots:
                try:
                    report = await measure_canaries(slot, python)
                except CanaryError as exc:
                    log.warning("canaries of %s did not run: %s", slot.name, exc)
                    continue
                path = f"/v1/runners/{self.joined.runner_id}/canaries"
                try:
                    answer = await self._call("POST", path, report, signed=True)
                except (aiohttp.ClientError, TimeoutError) as exc:
                    log.warning("could not report the canaries of %s: %s", slot.name, exc or type(exc).__name__)
                    continue
                if answer.status == 200:
                    self.standing = RunnerStanding.model_validate_json(answer.body)
                    log.info("canaries of %s reported; quarantined: %s", slot.name, self.standing.quarantined)
                else:
                    log.warning("canary report answered HTTP %d: %s", answer.status, answer.error())
        finally:
            if paused and not self.draining:
                manager.draining = False
                with contextlib.suppress(MembershipError, ValidationError, aiohttp.ClientError, TimeoutError):
                    await self.heartbeat(manager)  # active again

    async def canary_loop(self, manager: JobManager, python: str, interval_s: float) -> None:
        """Canaries now, then every `interval_s`; a first drift is measured again soon, after the slots idled
        (docs/canaries.md, the re-measure rule), so that a quarantine waits for two measurements, not two hours."""
        while True:
            await self.report_canaries(manager, python)
            if self.standing is not None and self.standing.canary == "needs_confirmation":
                log.warning("canaries drifted once; measuring again in %.0f s", CONFIRM_AFTER_S)
                await asyncio.sleep(CONFIRM_AFTER_S)
                await self.report_canaries(manager, python)
            await asyncio.sleep(interval_s)

    async def leave(self) -> None:
        """Tell the core this runner leaves its pool (best effort: a silent runner leaves by timeout anyway)."""
        if self.joined is None:
            return
        try:
            answer = await self._call("DELETE", f"/v1/runners/{self.joined.runner_id}", None, signed=True)
            log.info("left the pool (HTTP %d)", answer.status)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("could not tell the API this runner leaves: %s", exc or type(exc).__name__)
