"""Configuration of the runner daemon, read once from `RUNNER_*` environment variables (or a .env file).

This is the only module of the runner that reads the process environment. Build `RunnerSettings()` once in
the entry point and pass it down.
"""

from __future__ import annotations

import os
import ssl
import sys
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Variables a GPU host commonly needs inside the sandbox. Only these names are copied from the daemon's
# environment; everything else the worker sees is set explicitly, so no secret can ride along.
DEFAULT_PASSTHROUGH = (
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "TRITON_PTXAS_PATH",
    "TRITON_LIBCUDA_PATH",
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
    "OMP_NUM_THREADS",
    "TZ",
)
# The sandbox's default memory limit: what the host can give (its memory, or the runner's own cgroup limit where
# that is lower) less a quarter for the daemon, the judges and the processes started ahead, shared among the
# slots; at most this much per job.
DEFAULT_MAX_MEMORY_CAP_MB = 32 * 1024
MIN_MAX_MEMORY_MB = 256


def host_memory_mb() -> int | None:
    """What this host can give the runner, in MiB: its memory, or the runner's own cgroup limit where lower (a
    systemd MemoryMax, a pod's memory limit). None where neither can be read."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        total = None
    for limit in _cgroup_limits():
        total = limit if total is None else min(total, limit)
    return None if total is None else total >> 20


def _cgroup_limits() -> list[int]:
    """The memory limits of this process's cgroup and its ancestors (v2 memory.max, v1 memory.limit_in_bytes)."""
    limits: list[int] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return limits
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if number == "0" and controllers == "":
            base, name = Path("/sys/fs/cgroup"), "memory.max"
            if not (base / "cgroup.controllers").exists():
                base = base / "unified"
        elif "memory" in controllers.split(","):
            base, name = Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"
        else:
            continue
        directory = base / path.lstrip("/")
        while True:  # a limit above us binds as much as our own
            try:
                text = (directory / name).read_text().strip()
            except OSError:
                text = ""
            if text.isdigit() and int(text) < 1 << 60:  # v1 writes "unlimited" as a huge number
                limits.append(int(text))
            if directory == base or base not in directory.parents:
                break
            directory = directory.parent
    return limits


def _no_key_password() -> str:
    raise SettingsError("RUNNER_TLS_KEY_FILE is encrypted; give the runner an unencrypted key (mode 0600).")


class SettingsError(ValueError):
    """The runner's configuration is incomplete or contradictory; the message names the variable to fix."""


class RunnerSettings(BaseSettings):
    """Every knob of the runner daemon. Environment variables are the field names prefixed with RUNNER_."""

    model_config = SettingsConfigDict(
        env_prefix="RUNNER_", env_nested_delimiter="__", env_file=".env", extra="ignore", frozen=True
    )

    host: str = "127.0.0.1"
    port: int = Field(8700, ge=0, le=65535)
    name: str = Field(default_factory=lambda: os.uname().nodename, description="runner name shown in /v1/health")
    secret: SecretStr | None = Field(None, description="shared HMAC secret (or use secret_file)")
    secret_file: Path | None = Field(None, description="file holding the shared HMAC secret")
    clock_skew_s: float = Field(60.0, gt=0, description="largest accepted age of a signed request")
    metrics_unsigned: bool = Field(False, description="serve /metrics without a signature (for Prometheus)")
    tls_cert_file: Path | None = Field(None, description="PEM certificate chain; with tls_key_file, serve HTTPS")
    tls_key_file: Path | None = Field(None, description="PEM private key (unencrypted) of tls_cert_file")

    join_url: str | None = Field(
        None, pattern=r"^https?://", description="the core's API service to join a pool at (with token_file)"
    )
    token_file: Path | None = Field(None, description="file holding the pool's bootstrap token (with join_url)")
    advertise_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="where dispatchers reach this runner (in Kubernetes, the pod's address); default: the listen "
        "address and port",
    )
    drain_timeout_s: float = Field(
        360.0, gt=0, description="on SIGTERM, how long the jobs in hand may take to finish before the runner leaves"
    )

    canaries: bool = Field(True, description="in a pool: time the canary kernels at join and every canary_interval_s")
    canary_interval_s: float = Field(3600.0, gt=0, description="how often a pool member times its canaries again")

    device: Literal["auto", "gpu", "cpu"] = "auto"
    gpus: list[str] | None = Field(None, description="GPU indices or UUIDs to use; default: every GPU found")
    rank_slots: list[int] = Field(
        default_factory=list,
        description="beside the one-device slots, a slot per entry of that many ranks for distributed problems, e.g. "
        "[2, 4]; on the CPU only for now (gloo processes)",
    )
    max_queue: int = Field(16, ge=0, description="jobs waiting beyond the running ones; past it, 429")
    retention_s: float = Field(3600.0, gt=0, description="how long a finished job stays readable")
    state_dir: Path = Field(default_factory=lambda: Path(tempfile.gettempdir()) / "arena-runner")
    cache_dir: Path | None = Field(None, description="compiled-kernel cache; default: <state_dir>/nvcc-cache")
    cache_max_mb: int = Field(
        2048, ge=0, description="bound of the compiled-kernel cache; least recently used entries go first; 0: off"
    )
    python: str = Field(default_factory=lambda: sys.executable, description="interpreter for workers")
    warm_workers: bool = Field(True, description="each slot starts its next jobs' processes ahead")
    warm_ahead: int | None = Field(
        None,
        ge=1,
        le=4,
        description="with warm_workers: how many jobs' processes each slot keeps started ahead; default 2 on a GPU "
        "slot, 1 on a CPU one",
    )

    def warm_ahead_for(self, gpu_slot: bool) -> int:
        """Pairs started ahead on a slot. Two on a GPU, where a job takes less time than torch's import; one on
        the CPU, where jobs are slow anyway and a small machine's cores are better left to the job at hand."""
        if self.warm_ahead is not None:
            return self.warm_ahead
        return 2 if gpu_slot else 1

    # Deadlines that fit the work: a template bomb once held nvcc for the old 120 s, and a persistent kernel the
    # GPU for the old 300 s benchmark deadline. Inside the benchmark, each batch of timed calls also has its own
    # deadline from what the same calls took before (runner/judge/judged_timer.py), so a hang stops within seconds.
    compile_timeout_s: float = Field(60.0, gt=0, description="nvcc, and the worker's start and import")
    test_timeout_s: float = Field(60.0, gt=0, description="every test case's checked call (first calls compile)")
    benchmark_timeout_s: float = Field(150.0, gt=0)
    job_timeout_s: float = Field(300.0, gt=0)
    validate_timeout_s: float = Field(300.0, gt=0)

    require_namespaces: bool = Field(False, description="refuse to start without user/net/pid/mount namespaces")
    sandbox_required: Literal["full", "network", "none"] = Field(
        "none",
        description="the weakest sandbox level the runner starts with: below it, it refuses to start and names what "
        "the host or pod lacks; none: start at any level, with a loud warning below full (RUNNER_REQUIRE_NAMESPACES=1 "
        "means full)",
    )
    sandbox_uid: int = Field(
        61000,
        ge=1,
        description="when the daemon runs as root, slot i's jobs run as this uid + i (the next free block of 64 "
        "where another daemon on the host holds it)",
    )
    max_file_mb: int = Field(512, ge=1, description="largest file a job may write (RLIMIT_FSIZE)")
    max_open_files: int = Field(1024, ge=64)
    max_processes: int = Field(512, ge=16, description="tasks (processes and threads) per job, RLIMIT_NPROC")
    scratch_mb: int = Field(2048, ge=16, description="size of each job's private tmpfs (namespaces only)")
    output_limit_bytes: int = Field(64 * 1024, ge=1024, description="stdout+stderr kept per job")
    max_memory_mb: int | None = Field(
        None,
        ge=0,
        description="host memory of a job's solution process tree (anonymous and shared memory: memfds, SysV and "
        "POSIX shared memory, tmpfs files), past which it is killed with the verdict memory_limit; 0: no limit; "
        "default: three quarters of what the host can give, shared among the slots, at most 32 GiB per job",
    )
    memory_cgroup: str = Field(
        "auto",
        description="where jobs' memory cgroups are made: auto (under the runner's own delegated cgroup, where "
        "there is one), off (count from /proc), or a cgroup directory",
    )
    extra_binds: list[str] = Field(
        default_factory=list,
        description="more host paths shown read-only in the sandbox, beyond what jobs need to run (which is found "
        "by itself: /usr, the interpreter, the package's code, CUDA and the driver's libraries)",
    )
    mask_files: list[str] = Field(
        default_factory=list, description="files or directories shown empty where a tree bound in the sandbox has them"
    )
    env_passthrough: list[str] = Field(default_factory=lambda: list(DEFAULT_PASSTHROUGH))
    sandbox_env: dict[str, str] = Field(default_factory=dict, description="extra variables set in the sandbox")

    def secret_bytes(self) -> bytes:
        """The HMAC key; the daemon refuses to start without one. The file form keeps it out of the environment.

        Only the daemon needs it: the local CLI builds these settings for its sandbox knobs and never signs.
        """
        if self.secret is not None:
            key = self.secret.get_secret_value().encode()
        elif self.secret_file is None:
            raise SettingsError("Set RUNNER_SECRET or RUNNER_SECRET_FILE: the runner refuses unsigned requests.")
        else:
            try:
                key = self.secret_file.read_bytes().strip()
            except OSError as exc:
                raise SettingsError(f"RUNNER_SECRET_FILE {self.secret_file} cannot be read: {exc}") from exc
        if len(key) < 16:
            raise SettingsError("The runner secret is shorter than 16 bytes; use a long random value.")
        return key

    def required_sandbox(self) -> Literal["full", "network", "none"]:
        """The weakest sandbox level this runner may serve with: RUNNER_SANDBOX_REQUIRED, or full where the older
        RUNNER_REQUIRE_NAMESPACES asks for it."""
        return "full" if self.require_namespaces else self.sandbox_required

    def advertised_url(self) -> str:
        """Where dispatchers reach this runner. Raises SettingsError when it cannot be told from the listen address."""
        if self.advertise_url is not None:
            return self.advertise_url.rstrip("/")
        if self.host in ("0.0.0.0", "::", ""):
            raise SettingsError(
                f"RUNNER_HOST={self.host or '(all)'} listens everywhere, so the address dispatchers reach this runner "
                f"at is unknown: set RUNNER_ADVERTISE_URL (or --advertise), e.g. http://<pod or host IP>:{self.port}."
            )
        scheme = "https" if self.tls_cert_file is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    @model_validator(mode="after")
    def _rank_counts(self) -> RunnerSettings:
        # A slot of one rank is a one-device slot, which the runner has already; 64 bounds what a host could hold.
        wrong = [n for n in self.rank_slots if not 2 <= n <= 64]
        if wrong:
            raise ValueError(f"RUNNER_RANK_SLOTS holds {wrong}: each slot needs 2 to 64 ranks, e.g. [2, 4]")
        return self

    @model_validator(mode="after")
    def _tls_pair(self) -> RunnerSettings:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("set both RUNNER_TLS_CERT_FILE and RUNNER_TLS_KEY_FILE to serve HTTPS, or neither")
        return self

    def server_ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context to serve HTTPS with, or None for plain HTTP. Raises SettingsError naming the file."""
        if self.tls_cert_file is None or self.tls_key_file is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.tls_cert_file, self.tls_key_file, password=_no_key_password)
        except (OSError, ssl.SSLError) as exc:
            raise SettingsError(
                f"Cannot load the TLS certificate RUNNER_TLS_CERT_FILE={self.tls_cert_file} with its key "
                f"RUNNER_TLS_KEY_FILE={self.tls_key_file}: {getattr(exc, 'strerror', None) or exc}. Give PEM files "
                f"the runner can read, the key unencrypted and matching the certificate."
            ) from exc
        return context

    def replay_log_path(self) -> Path:
        """Every accepted request signature, kept so that a restart cannot be used to replay one."""
        return self.state_dir / "auth" / "accepted-signatures"

    def resolved_max_memory_mb(self, slots: int = 1) -> int:
        """The memory limit per job in MiB (0: none). By default the `slots` jobs that run at once together
        commit at most three quarters of what the host can give (`host_memory_mb`)."""
        if self.max_memory_mb is not None:
            return self.max_memory_mb
        host_mb = host_memory_mb()
        if host_mb is None:
            return DEFAULT_MAX_MEMORY_CAP_MB
        return max(min(host_mb * 3 // 4 // max(slots, 1), DEFAULT_MAX_MEMORY_CAP_MB), MIN_MAX_MEMORY_MB)

    def resolved_cache_dir(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else self.state_dir / "nvcc-cache"

    def passthrough_env(self) -> dict[str, str]:
        """The allowlisted variables copied from the daemon's own environment (never RUNNER_*)."""
        names = [n for n in self.env_passthrough if not n.upper().startswith("RUNNER_")]
        return {name: os.environ[name] for name in names if name in os.environ}
