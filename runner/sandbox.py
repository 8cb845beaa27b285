"""Builds and starts the sandboxed processes that run a job: the compiler, the worker, the admission test.

Layers, outermost first (DESIGN §6):
- when the daemon runs as root, the process starts as an unprivileged uid of its slot (`sandbox_uid + slot`),
  so RLIMIT_NPROC applies and nothing the daemon owns is writable;
- `unshare` gives it new user, network, pid, mount, IPC and UTS namespaces where the kernel allows them: no
  route to 127.0.0.1, no view of other processes, and `runner/sandbox_init.py` hides the host's files;
- an empty environment plus an allowlist, with HOME, TMPDIR and every cache under the job's private directory;
- rlimits (no core dumps, file size, open files, tasks); a new session, so the daemon kills the whole group.
Where namespaces are unavailable the job still gets the other layers, and the runner logs a loud warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import site
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from runner.settings import RunnerSettings

log = logging.getLogger(__name__)

INIT_SCRIPT = Path(__file__).with_name("sandbox_init.py")
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
HOSTNAME = "arena-sandbox"
INNER_UID = 1000
_BOOTSTRAP = "import sys; sys.path.insert(0, {root!r}); from {module} import main; sys.exit(main())"
_SPAWN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class SandboxLevel(StrEnum):
    """How much isolation the kernel allows here, best first."""

    FULL = "full"  # user + network + pid + mount (+ IPC, UTS) namespaces
    NETWORK = "network"  # user + network namespaces only
    NONE = "none"  # uid, environment and rlimits only


_UNSHARE_FLAGS: dict[SandboxLevel, tuple[str, ...]] = {
    SandboxLevel.FULL: (
        "--user",
        "--map-root-user",
        "--net",
        "--pid",
        "--fork",
        "--kill-child=SIGKILL",
        "--mount",
        "--mount-proc",
        "--ipc",
        "--uts",
    ),
    SandboxLevel.NETWORK: ("--user", "--map-root-user", "--net", "--fork", "--kill-child=SIGKILL"),
    SandboxLevel.NONE: (),
}


class SandboxUnavailableError(RuntimeError):
    """Namespaces are required by the settings but this host does not allow them."""


@dataclass(frozen=True)
class SandboxPolicy:
    """What every sandboxed process of this runner gets; built once from the settings."""

    python: str
    uid_base: int | None
    rlimits: Mapping[str, int]
    scratch_mb: int
    hide_dirs: tuple[str, ...]
    mask_files: tuple[str, ...]
    env: Mapping[str, str]
    unshare: str | None = field(default_factory=lambda: shutil.which("unshare"))

    @classmethod
    def from_settings(cls, settings: RunnerSettings) -> SandboxPolicy:
        env = {**settings.passthrough_env(), **settings.sandbox_env}
        masks = list(settings.mask_files)
        if settings.secret_file is not None:
            masks.append(str(settings.secret_file))
        hidden = [*settings.hide_dirs, str(settings.state_dir), str(settings.resolved_cache_dir())]
        return cls(
            python=settings.python,
            uid_base=settings.sandbox_uid if os.geteuid() == 0 else None,
            rlimits={
                "core": 0,
                "fsize": settings.max_file_mb << 20,
                "nofile": settings.max_open_files,
                "nproc": settings.max_processes,
            },
            scratch_mb=settings.scratch_mb,
            hide_dirs=tuple(_hideable(hidden, settings.python, env)),
            mask_files=tuple(masks),
            env=env,
        )


def _needed_paths(python: str, env: Mapping[str, str]) -> list[Path]:
    """Paths a sandboxed process must see to run at all: hiding an ancestor of one would break every job."""
    paths = [Path(python).parent, Path(os.path.realpath(python)).parent, PACKAGE_ROOT]
    paths += [Path(p) for p in (sys.prefix, sys.base_prefix, *site.getsitepackages())]
    nvcc = shutil.which("nvcc")
    if nvcc:
        paths.append(Path(os.path.realpath(nvcc)).parent.parent)
    paths += [Path(p) for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    return [p.resolve() for p in paths]


def _hideable(candidates: Sequence[str], python: str, env: Mapping[str, str]) -> list[str]:
    needed = _needed_paths(python, env)
    kept: list[str] = []
    for candidate in dict.fromkeys(candidates):
        path = Path(candidate).resolve()
        blocking = next((n for n in needed if n == path or path in n.parents), None)
        if blocking is not None:
            log.info("sandbox keeps %s visible: it holds %s", candidate, blocking)
        else:
            kept.append(str(path))
    return kept


@dataclass(frozen=True)
class JobDir:
    """A job's private directory: in/ (read-only inputs), out/ (compiler output), scratch/ (HOME, TMPDIR,
    caches; a size-limited tmpfs with namespaces) and etc/ (synthetic passwd and friends)."""

    root: Path
    uid: int | None

    @property
    def in_dir(self) -> Path:
        return self.root / "in"

    @property
    def out_dir(self) -> Path:
        return self.root / "out"

    @property
    def scratch(self) -> Path:
        return self.root / "scratch"

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @classmethod
    def create(cls, base: Path, name: str, uid: int | None) -> JobDir:
        """Make the directory tree; blocking, so call it through `asyncio.to_thread`."""
        base.mkdir(parents=True, exist_ok=True)
        os.chmod(base, 0o711)  # traversable but not listable: one job cannot enumerate the others
        job = cls(base / name, uid)
        job.root.mkdir(mode=0o700)
        for public in (job.in_dir, job.etc):
            public.mkdir(mode=0o755)
        for private in (job.out_dir, job.scratch):
            private.mkdir(mode=0o700)
        _write_etc(job.etc, job.scratch / "home")
        if uid is not None:
            for owned in (job.root, job.out_dir, job.scratch):
                os.chown(owned, uid, uid)
        return job

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _write_etc(etc: Path, home: Path) -> None:
    users = (
        "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"arena:x:{INNER_UID}:{INNER_UID}:arena:{home}:/usr/sbin/nologin\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    files = {
        "passwd": users,
        "group": f"root:x:0:\narena:x:{INNER_UID}:\nnogroup:x:65534:\n",
        "hosts": f"127.0.0.1 localhost {HOSTNAME}\n::1 localhost\n",
        "hostname": f"{HOSTNAME}\n",
        "empty": "",
    }
    for name, text in files.items():
        (etc / name).write_text(text, encoding="utf-8")
        os.chmod(etc / name, 0o644)


def python_command(python: str, module: str, args: Sequence[str]) -> list[str]:
    """Run `module.main()` with `python -I`: no PYTHON* variables, no user site, no cwd on sys.path."""
    return [python, "-I", "-c", _BOOTSTRAP.format(root=str(PACKAGE_ROOT), module=module), *args]


@dataclass(frozen=True)
class Sandbox:
    """Starts sandboxed processes with one policy at one isolation level."""

    policy: SandboxPolicy
    level: SandboxLevel

    def uid_for(self, slot_index: int) -> int | None:
        return None if self.policy.uid_base is None else self.policy.uid_base + slot_index

    def environment(self, job: JobDir, slot_env: Mapping[str, str]) -> dict[str, str]:
        """The whole environment of the job: the allowlist plus private locations for everything that caches."""
        scratch = job.scratch
        path = [str(Path(self.policy.python).parent)]
        nvcc = shutil.which("nvcc")
        if nvcc:
            path.append(str(Path(nvcc).parent))
        env = dict(self.policy.env)
        env.update(
            {
                "PATH": ":".join(dict.fromkeys([*path, "/usr/local/bin", "/usr/bin", "/bin"])),
                "HOME": str(scratch / "home"),
                "TMPDIR": str(scratch / "tmp"),
                "XDG_CACHE_HOME": str(scratch / "cache"),
                "XDG_CONFIG_HOME": str(scratch / "config"),
                "XDG_DATA_HOME": str(scratch / "data"),
                "TRITON_CACHE_DIR": str(scratch / "cache" / "triton"),
                "TORCH_EXTENSIONS_DIR": str(scratch / "cache" / "torch_extensions"),
                "TORCHINDUCTOR_CACHE_DIR": str(scratch / "cache" / "inductor"),
                "CUDA_CACHE_PATH": str(scratch / "cache" / "nv"),
                "MPLCONFIGDIR": str(scratch / "config" / "matplotlib"),
                "USER": "arena",
                "LOGNAME": "arena",
                "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8",
            }
        )
        env.update(slot_env)
        return env

    def spec(self, job: JobDir, env: Mapping[str, str], *, writable_out: bool) -> dict[str, object]:
        """The JSON handed to sandbox_init.py."""
        etc = job.etc
        masks = {
            "/etc/passwd": str(etc / "passwd"),
            "/etc/group": str(etc / "group"),
            "/etc/hosts": str(etc / "hosts"),
            "/etc/hostname": str(etc / "hostname"),
            **{p: str(etc / "empty") for p in ("/etc/shadow", "/etc/gshadow", "/etc/machine-id")},
            **{p: str(etc / "empty") for p in self.policy.mask_files},
        }
        home_dirs = ("HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TRITON_CACHE_DIR")
        return {
            "isolate_fs": self.level is SandboxLevel.FULL,
            "job_dir": str(job.root),
            "scratch_dir": str(job.scratch),
            "scratch_mb": self.policy.scratch_mb,
            "hide_dirs": list(self.policy.hide_dirs),
            "keep_paths": self.kept_code_paths(),
            "rw_binds": [str(job.out_dir)] if writable_out else [],
            "mask_files": masks,
            "hostname": HOSTNAME,
            "make_dirs": [env[name] for name in home_dirs],
            "rlimits": dict(self.policy.rlimits),
            "cwd": str(job.scratch),
            "env": dict(env),
        }

    def kept_code_paths(self) -> list[str]:
        """Code the worker needs that sits under a directory the sandbox empties (an install or a virtual
        environment under /tmp, say). The sandbox puts these back, read-only, over its fresh tmpfs."""
        emptied = [Path("/tmp"), Path("/dev/shm"), *(Path(d) for d in self.policy.hide_dirs)]
        interpreter = Path(self.policy.python)
        candidates = {PACKAGE_ROOT, interpreter.parent.parent, interpreter.resolve().parent.parent}
        candidates |= {Path(sys.prefix), Path(sys.base_prefix)}
        kept = sorted(
            str(path) for path in candidates if path.is_dir() and any(path.is_relative_to(e) for e in emptied)
        )
        # A path inside another kept path comes back with it.
        return [p for p in kept if not any(p != q and Path(p).is_relative_to(q) for q in kept)]

    def command(self, job: JobDir, argv: Sequence[str], env: Mapping[str, str], *, writable_out: bool) -> list[str]:
        spec = json.dumps(self.spec(job, env, writable_out=writable_out))
        init = [self.policy.python, "-I", str(INIT_SCRIPT), spec, "--", *argv]
        if self.level is SandboxLevel.NONE:
            return init
        assert self.policy.unshare is not None
        return [self.policy.unshare, *_UNSHARE_FLAGS[self.level], *init]

    async def spawn(
        self,
        job: JobDir,
        argv: Sequence[str],
        *,
        slot_env: Mapping[str, str],
        writable_out: bool = False,
        pass_fds: Sequence[int] = (),
    ) -> asyncio.subprocess.Process:
        """Start `argv` in the sandbox: its own session, stdout and stderr merged into one pipe."""
        cmd = self.command(job, argv, self.environment(job, slot_env), writable_out=writable_out)
        ids: dict[str, object] = {}
        if job.uid is not None:
            ids = {"user": job.uid, "group": job.uid, "extra_groups": []}
        return await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            pass_fds=tuple(pass_fds),
            cwd="/",
            env=_SPAWN_ENV,
            start_new_session=True,
            **ids,  # type: ignore[arg-type]
        )

    async def reap(self, uid: int | None) -> None:
        """Kill whatever still runs as a job's uid: processes that left the group when no pid namespace does it."""
        if uid is None or self.level is SandboxLevel.FULL:
            return
        code = "import os\ntry:\n    os.kill(-1, 9)\nexcept ProcessLookupError:\n    pass"
        with contextlib.suppress(OSError):
            proc = await asyncio.create_subprocess_exec(
                self.policy.python, "-I", "-c", code, user=uid, group=uid, extra_groups=[], env=_SPAWN_ENV
            )
            await proc.wait()


def check_reachable(path: Path, uid: int | None) -> None:
    """Jobs run as another uid when the daemon is root: every ancestor of the jobs directory must let them pass."""
    if uid is None:
        return
    for ancestor in [*reversed(path.resolve().parents), path.resolve()]:
        if ancestor.exists() and not ancestor.stat().st_mode & 0o001:
            raise SandboxUnavailableError(
                f"Jobs run as uid {uid}, which cannot enter {ancestor} (mode {ancestor.stat().st_mode & 0o777:o}). "
                f"Put RUNNER_STATE_DIR under a directory others may traverse, or run `chmod o+x {ancestor}`."
            )


async def detect_level(policy: SandboxPolicy, base: Path) -> SandboxLevel:
    """The best isolation that works here, found by starting a trivial sandboxed process at each level."""
    candidates = [SandboxLevel.FULL, SandboxLevel.NETWORK] if policy.unshare else []
    for level in candidates:
        sandbox = Sandbox(policy, level)
        job = await asyncio.to_thread(JobDir.create, base, f"probe-{level}-{os.getpid()}", sandbox.uid_for(0))
        try:
            proc = await sandbox.spawn(job, [policy.python, "-I", "-c", "pass"], slot_env={})
            output, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
            if proc.returncode == 0:
                return level
            log.warning("sandbox level %s is unavailable here: %s", level, output.decode(errors="replace").strip())
        except (OSError, TimeoutError) as exc:
            log.warning("sandbox level %s is unavailable here: %s", level, exc)
        finally:
            await asyncio.to_thread(job.remove)
    return SandboxLevel.NONE


async def open_sandbox(policy: SandboxPolicy, base: Path, *, required: bool) -> Sandbox:
    """Probe the host and return a Sandbox; warn loudly (or refuse, when required) without full isolation."""
    check_reachable(base.parent, policy.uid_base)
    check_reachable(PACKAGE_ROOT, policy.uid_base)  # the worker imports the runner from here
    level = await detect_level(policy, base)
    if level is not SandboxLevel.FULL:
        if required:
            raise SandboxUnavailableError(
                f"RUNNER_REQUIRE_NAMESPACES is set, but this host allows only sandbox level {level!s}: "
                "enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1) and install util-linux."
            )
        log.warning(
            "!!! SANDBOX DEGRADED: level %s. Submissions may reach the network, see other processes or "
            "read host files. Enable user, pid and mount namespaces, or set RUNNER_REQUIRE_NAMESPACES=1 "
            "to refuse to start like this. !!!",
            level,
        )
    if policy.uid_base is None and os.geteuid() != 0:
        log.info("jobs run as the daemon's own uid %d (not root, so no per-slot uid)", os.geteuid())
    return Sandbox(policy, level)
