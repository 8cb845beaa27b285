"""Builds and starts the sandboxed processes that run a job: the compiler, the worker, the admission test.

Layers, outermost first (DESIGN §6):
- the spawned process is tied to its owner: `setpriv --pdeathsig KILL` (or a prctl before exec) kills it when
  the daemon, the bot or `arena submit` dies, whatever kills them, and `unshare --kill-child` passes that on
  to the pid namespace, where the kernel kills everything left;
- `unshare` gives it new network, pid, mount, IPC and UTS namespaces (and a user namespace when the daemon is
  not root): no route to 127.0.0.1 and no view of other processes;
- `runner/host/sandbox_init.py` builds a fresh root holding only what the job needs (an allowlist: /usr, the
  interpreter's install tree, the package's own code, the CUDA toolkit and driver libraries, a minimal /etc
  and /dev, the job's own directory) and then drops privilege: to an unprivileged uid of the slot
  (`sandbox_uid + slot`, so RLIMIT_NPROC applies) when the daemon is root, to a nested user namespace
  otherwise;
- an empty environment plus an allowlist, with HOME, TMPDIR and every cache under the job's private directory;
- rlimits (no core dumps, file size, open files, tasks); a new session, so the daemon kills the whole group.
Where namespaces are unavailable the job still gets the other layers, and the runner logs a loud warning; with
RUNNER_SANDBOX_REQUIRED it refuses to start instead, naming what the host or pod lacks (runner/host/sandbox_needs.py).

Kept as one module: the layers of one sandbox (namespaces, the fresh root, the uid, the environment) and the probe
that finds which of them work here must agree on every flag; sandbox_init.py, process.py and memory_cgroup.py hold
the parts that stand alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import glob
import json
import logging
import os
import shutil
import site
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from contract.names import SANDBOX_LEVELS
from runner.host.job_uids import JobUidsTakenError, claim_uid_base
from runner.host.memory_cgroup import JobCgroups, join_self
from runner.host.sandbox_needs import KUBERNETES_HINT, full_sandbox_shortfalls
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)

INIT_SCRIPT = Path(__file__).with_name("sandbox_init.py")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# The only parts of the checkout a worker imports: the rest (.git, .env, tests, deploy files) stays out of view.
PACKAGE_DIRS = ("contract", "runner", "problems")
HOSTNAME = "arena-sandbox"
INNER_UID = 1000
# Where Triton keeps the kernels it compiles, under a job's scratch: the precision audit reads its cubins there.
TRITON_CACHE_PARTS = ("cache", "triton")
_BOOTSTRAP = "import sys; sys.path.insert(0, {root!r}); from {module} import main; sys.exit(main())"
_SPAWN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
_PR_SET_PDEATHSIG = 1
_SIGKILL = 9
# Loaded here, not in the forked child: a child of a threaded process must not take the loader's locks.
_LIBC = ctypes.CDLL(None, use_errno=True)

# What every job sees of the host besides the interpreter and the package, read-only. A missing path is skipped.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Of /etc, only what the dynamic loader, the C library and the time zone need; passwd and friends are synthetic.
ETC_PATHS = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/nsswitch.conf",
)
# Trees the sandbox makes itself (a fresh /proc, a minimal /dev, a read-only /sys): never bound from a setting.
_OWN_TREES = ("/proc", "/sys", "/dev")


class SandboxLevel(StrEnum):
    """How much isolation the kernel allows here, best first."""

    FULL = "full"  # network + pid + mount (+ IPC, UTS) namespaces and a fresh root; user namespace when not root
    NETWORK = "network"  # network namespace only (plus a user namespace when not root)
    NONE = "none"  # uid, environment and rlimits only

    def covers(self, other: SandboxLevel) -> bool:
        """Whether this level isolates at least as much as `other`."""
        return SANDBOX_LEVELS.index(self.value) >= SANDBOX_LEVELS.index(other.value)


def unshare_flags(level: SandboxLevel, as_root: bool) -> tuple[str, ...]:
    """`unshare` options for a level. As root no user namespace is needed (the init drops to the slot's uid
    itself), and none is wanted: its uid could not reach an interpreter under a private home such as /root."""
    user = () if as_root else ("--user", "--map-root-user")
    if level is SandboxLevel.FULL:
        pid_mount = ("--pid", "--fork", "--kill-child=SIGKILL", "--mount", "--mount-proc", "--ipc", "--uts")
        return (*user, "--net", *pid_mount)
    if level is SandboxLevel.NETWORK:
        return (*user, "--net", "--fork", "--kill-child=SIGKILL")
    return ()


class SandboxUnavailableError(RuntimeError):
    """Namespaces are required by the settings but this host does not allow them, or a job could not start."""


@dataclass(frozen=True)
class RootView:
    """The host paths a job's fresh root holds: real directories and files bound read-only, and the symlinks on
    the way to them recreated (a merged-usr /lib, a venv's python, /usr/local/cuda), all as absolute paths."""

    binds: tuple[str, ...]
    links: tuple[tuple[str, str], ...]

    def contains(self, path: str) -> bool:
        return any(_is_within(path, bound) for bound in self.binds)


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _resolve(path: str, links: dict[str, str], depth: int = 0) -> str | None:
    """The real path of `path`, recording each symlink met on the way; None where it does not exist."""
    if depth > 40:
        return None
    current = "/"
    parts = [part for part in path.split("/") if part and part != "."]
    for index, part in enumerate(parts):
        if part == "..":
            current = os.path.dirname(current)  # `current` has no symlink in it, so this is exact
            continue
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            links[candidate] = target
            base = target if os.path.isabs(target) else os.path.join(current, target)
            rest = "/".join(parts[index + 1 :])
            return _resolve(os.path.join(base, rest) if rest else base, links, depth + 1)
        if not os.path.lexists(candidate):
            return None
        current = candidate
    return current


def plan_view(requested: Iterable[str]) -> RootView:
    """Resolve the requested paths into binds (outermost only) and the symlinks a job needs to reach them."""
    links: dict[str, str] = {}
    real: list[str] = []
    for path in requested:
        resolved = _resolve(os.path.abspath(path), links)
        if resolved is None:
            continue
        if resolved == "/":
            log.warning("sandbox: refusing to show the whole filesystem (asked for by %s)", path)
            continue
        if any(_is_within(resolved, own) for own in _OWN_TREES):
            continue
        real.append(resolved)
    unique = sorted(set(real))
    binds = [p for p in unique if not any(p != q and _is_within(p, q) for q in unique)]
    kept_links = sorted(
        (link, target)
        for link, target in links.items()
        if not any(_is_within(link, b) for b in binds) and not any(_is_within(link, own) for own in _OWN_TREES)
    )
    return RootView(tuple(binds), tuple(kept_links))


def ld_config_dirs(conf: str = "/etc/ld.so.conf", depth: int = 0) -> list[str]:
    """The library directories of the dynamic loader's configuration (`include` globs followed): a GPU host's
    driver libraries (libcuda, libnvidia-ml) live in one of them."""
    if depth > 8:
        return []
    try:
        with open(conf, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    dirs: list[str] = []
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include"):
            pattern = line.split(None, 1)[1] if len(line.split(None, 1)) == 2 else ""
            if pattern and not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(conf), pattern)
            for included in sorted(glob.glob(pattern)):
                dirs += ld_config_dirs(included, depth + 1)
        elif line.startswith("/"):
            dirs.append(line.split()[0])
    return dirs


@functools.cache
def interpreter_paths(python: str) -> list[str]:
    """The install trees of `python`: its prefix, base prefix and site-packages (asked of the interpreter
    itself when it is not this one). Blocking."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        return [sys.prefix, sys.base_prefix, *site.getsitepackages()]
    code = "import json, site, sys; print(json.dumps([sys.prefix, sys.base_prefix, *site.getsitepackages()]))"
    try:
        out = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True)
        paths = json.loads(out.stdout.strip().splitlines()[-1])
        return [str(p) for p in paths]
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        log.warning("could not ask %s for its install tree (%s); showing jobs its bin directory's parent", python, exc)
        return [str(Path(python).parent.parent), str(Path(os.path.realpath(python)).parent.parent)]


# Where the CUDA toolkit's `ncu` launcher looks for the Nsight Compute it starts: beside itself in the toolkit, or
# where the distribution's packages put it.
NSIGHT_COMPUTE_GLOBS = ("/opt/nvidia/nsight-compute*",)


def nsight_compute_paths(ncu: str, system_globs: Sequence[str] = NSIGHT_COMPUTE_GLOBS) -> list[str]:
    """The folders a job needs to run `ncu`: its own, and the install trees the toolkit's launcher script
    searches (`<toolkit>/nsight-compute-*`, `/opt/nvidia/nsight-compute`); only those that exist."""
    here = Path(os.path.realpath(ncu)).parent
    found = [here, *sorted(here.parent.glob("nsight-compute*"))]
    found += [Path(p) for pattern in system_globs for p in sorted(glob.glob(pattern))]
    return [str(p) for p in dict.fromkeys(found) if p.is_dir()]


def needed_paths(python: str, env: Mapping[str, str], extra: Sequence[str] = ()) -> list[str]:
    """Every host path a job reads: the system, the interpreter, the package's code, CUDA and the driver."""
    paths = [*SYSTEM_PATHS, *ETC_PATHS, python, *interpreter_paths(python)]
    paths += [str(PACKAGE_ROOT / name) for name in PACKAGE_DIRS]
    nvcc = shutil.which("nvcc")
    if nvcc:
        paths += [nvcc, str(Path(os.path.realpath(nvcc)).parent.parent)]  # the CUDA toolkit's root
    ncu = shutil.which("ncu")
    if ncu:
        paths += [ncu, *nsight_compute_paths(ncu)]  # mode profile runs it inside the sandbox
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(name):
            paths.append(env[name])
    for name in ("TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH"):
        if env.get(name):
            paths.append(env[name] if os.path.isdir(env[name]) else os.path.dirname(env[name]))
    paths += [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p.startswith("/")]
    paths += ld_config_dirs()
    paths += list(extra)
    return paths


@dataclass(frozen=True)
class SandboxPolicy:
    """What every sandboxed process of this runner gets; built once from the settings."""

    python: str
    uid_base: int | None
    rlimits: Mapping[str, int]
    scratch_mb: int
    view: RootView
    mask_paths: tuple[str, ...]
    env: Mapping[str, str]
    unshare: str | None = field(default_factory=lambda: shutil.which("unshare"))
    setpriv: str | None = field(default_factory=lambda: _setpriv_with_pdeathsig())
    required: SandboxLevel = SandboxLevel.NONE  # below it the runner refuses to start (RUNNER_SANDBOX_REQUIRED)

    @property
    def as_root(self) -> bool:
        return self.uid_base is not None

    @classmethod
    def from_settings(cls, settings: RunnerSettings) -> SandboxPolicy:
        """Blocking (it may ask the workers' interpreter where it lives): call it through `asyncio.to_thread`."""
        env = {**settings.passthrough_env(), **settings.sandbox_env}
        masks = [*settings.mask_files, str(settings.state_dir), str(settings.resolved_cache_dir())]
        # The runner's credentials: the shared secret, or the pool's bootstrap token (with which anyone could join).
        masks += [str(path) for path in (settings.secret_file, settings.token_file) if path is not None]
        return cls(
            python=settings.python,
            uid_base=_job_uid_base(settings.sandbox_uid) if os.geteuid() == 0 else None,
            rlimits={
                "core": 0,
                "fsize": settings.max_file_mb << 20,
                "nofile": settings.max_open_files,
                "nproc": settings.max_processes,
            },
            scratch_mb=settings.scratch_mb,
            view=plan_view(needed_paths(settings.python, env, settings.extra_binds)),
            mask_paths=tuple(dict.fromkeys(os.path.realpath(p) for p in masks)),
            env=env,
            required=SandboxLevel(settings.required_sandbox()),
        )


def _job_uid_base(configured: int) -> int:
    try:
        return claim_uid_base(configured)
    except JobUidsTakenError as exc:
        raise SandboxUnavailableError(str(exc)) from exc


@functools.cache
def _setpriv_with_pdeathsig() -> str | None:
    """util-linux `setpriv`, where it knows --pdeathsig (2.33 and later)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    try:
        probe = subprocess.run([setpriv, "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return setpriv if probe.returncode == 0 else None


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
        _write_etc(job.etc, job.scratch / "home", uid if uid is not None else INNER_UID)
        if uid is not None:
            for owned in (job.root, job.out_dir, job.scratch):
                os.chown(owned, uid, uid)
        return job

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _write_etc(etc: Path, home: Path, uid: int) -> None:
    users = (
        "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"arena:x:{uid}:{uid}:arena:{home}:/usr/sbin/nologin\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    files = {
        "passwd": users,
        "group": f"root:x:0:\narena:x:{uid}:\nnogroup:x:65534:\n",
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


def _die_with_parent() -> None:
    """Fallback where setpriv cannot: runs in the forked child before exec (the event loop's thread forked it,
    and that thread lives as long as the owner)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)


def _before_exec(die_with_parent: bool, cgroup_procs_fd: int | None) -> Callable[[], None] | None:
    """What the forked child runs before exec: the parent-death prctl where setpriv cannot, joining the job's
    cgroup where it has one, and the daemon's niceness for the job's session where the daemon runs under `nice`."""
    niceness = os.nice(0)
    if not die_with_parent and cgroup_procs_fd is None and niceness <= 0:
        return None

    def before_exec() -> None:
        if die_with_parent:
            _die_with_parent()
        if cgroup_procs_fd is not None:
            join_self(cgroup_procs_fd)
        if niceness > 0:
            _nice_session(niceness)

    return before_exec


def _nice_session(niceness: int) -> None:
    """Give the job's new session (its own scheduler autogroup, where the kernel groups by session) the daemon's
    niceness. The kernel weighs autogroups equally, whatever the niceness of the processes inside: without this, a
    runner started under `nice` to take only the CPU the host leaves over ran its jobs at an equal share with the
    host's own work (a CPU runner beside the core's services took 0.6-0.8 of 2 cores). Only ever raises the
    niceness, which needs no privilege; a kernel without autogroups has no such file, and nothing to do."""
    with contextlib.suppress(OSError):
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(niceness))


@dataclass(frozen=True)
class MemoryBounds:
    """What bounds one process tree's memory beyond the runner's watch of its pages.

    `cgroup_procs_fd`: the job cgroup's `cgroup.procs`, joined before exec. Without a cgroup, in the full
    sandbox: `shm_limit_bytes` caps SysV shared memory in the job's own IPC namespace (kernel.shmmax and
    shmall), and the init sends /proc/sysvipc/shm, opened in that namespace, over `sysv_report_fd`.
    """

    cgroup_procs_fd: int | None = None
    shm_limit_bytes: int | None = None
    sysv_report_fd: int | None = None


@dataclass(frozen=True)
class Sandbox:
    """Starts sandboxed processes with one policy at one isolation level."""

    policy: SandboxPolicy
    level: SandboxLevel
    cgroups: JobCgroups | None = None  # where jobs' memory cgroups go; None: the watch counts from /proc

    def uid_for(self, slot_index: int) -> int | None:
        return None if self.policy.uid_base is None else self.policy.uid_base + slot_index

    def environment(self, job: JobDir, slot_env: Mapping[str, str]) -> dict[str, str]:
        """The whole environment of the job: the allowlist plus private locations for everything that caches."""
        scratch = job.scratch
        path = [str(Path(self.policy.python).parent)]
        for tool in ("nvcc", "ncu"):  # ncu: mode profile runs it inside the sandbox
            found = shutil.which(tool)
            if found:
                path.append(str(Path(found).parent))
        env = dict(self.policy.env)
        env.update(
            {
                "PATH": ":".join(dict.fromkeys([*path, "/usr/local/bin", "/usr/bin", "/bin"])),
                "HOME": str(scratch / "home"),
                "TMPDIR": str(scratch / "tmp"),
                "XDG_CACHE_HOME": str(scratch / "cache"),
                "XDG_CONFIG_HOME": str(scratch / "config"),
                "XDG_DATA_HOME": str(scratch / "data"),
                "TRITON_CACHE_DIR": str(scratch.joinpath(*TRITON_CACHE_PARTS)),
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

    def spec(
        self,
        job: JobDir,
        env: Mapping[str, str],
        *,
        writable_out: bool,
        memory: MemoryBounds | None = None,
        loopback: bool = False,
    ) -> dict[str, object]:
        """The JSON handed to sandbox_init.py. `loopback`: bring up the job's own loopback interface (a
        distributed job's ranks meet over it); only where the job has a network namespace of its own, since
        without one the host's loopback is the one it would touch."""
        memory = memory or MemoryBounds()
        home_dirs = ("HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TRITON_CACHE_DIR")
        etc = {f"/etc/{name}": str(job.etc / name) for name in ("passwd", "group", "hosts", "hostname")}
        return {
            "isolate_fs": self.level is SandboxLevel.FULL,
            "uid": job.uid,
            "job_dir": str(job.root),
            "scratch_dir": str(job.scratch),
            "scratch_mb": self.policy.scratch_mb,
            "binds": list(self.policy.view.binds),
            "links": [list(link) for link in self.policy.view.links],
            "etc_files": etc,
            "empty_file": str(job.etc / "empty"),
            "masks": list(self.policy.mask_paths),
            "rw_binds": [str(job.out_dir)] if writable_out else [],
            "hostname": HOSTNAME,
            "make_dirs": [env[name] for name in home_dirs],
            "rlimits": dict(self.policy.rlimits),
            "cwd": str(job.scratch),
            "env": dict(env),
            "shm_limit_bytes": memory.shm_limit_bytes,
            "sysv_report_fd": memory.sysv_report_fd,
            "loopback": loopback and self.level is not SandboxLevel.NONE,
        }

    def command(
        self,
        job: JobDir,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        writable_out: bool,
        memory: MemoryBounds | None = None,
        loopback: bool = False,
    ) -> list[str]:
        spec = json.dumps(self.spec(job, env, writable_out=writable_out, memory=memory, loopback=loopback))
        init = [self.policy.python, "-I", str(INIT_SCRIPT), spec, "--", *argv]
        if self.level is not SandboxLevel.NONE:
            assert self.policy.unshare is not None
            init = [self.policy.unshare, *unshare_flags(self.level, self.policy.as_root), *init]
        if self.policy.setpriv is not None:
            return [self.policy.setpriv, "--pdeathsig", "KILL", "--", *init]
        return init

    async def spawn(
        self,
        job: JobDir,
        argv: Sequence[str],
        *,
        slot_env: Mapping[str, str],
        writable_out: bool = False,
        pass_fds: Sequence[int] = (),
        memory: MemoryBounds | None = None,
        loopback: bool = False,
    ) -> asyncio.subprocess.Process:
        """Start `argv` in the sandbox: its own session, stdout and stderr merged into one pipe.

        The process starts as the daemon's own user (so it can reach an interpreter under a private home);
        the sandbox's init drops to the job's uid once the job's filesystem is built. It is forked by the event
        loop's thread: the parent-death signal fires when that thread ends, and it lives as long as the owner.
        With `memory.cgroup_procs_fd` it joins that cgroup before it execs, so all it starts is counted there.
        """
        memory = memory or MemoryBounds()
        env = self.environment(job, slot_env)
        cmd = self.command(job, argv, env, writable_out=writable_out, memory=memory, loopback=loopback)
        preexec = _before_exec(self.policy.setpriv is None, memory.cgroup_procs_fd)
        extra = () if memory.sysv_report_fd is None else (memory.sysv_report_fd,)
        return await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            pass_fds=(*pass_fds, *extra),
            cwd="/",
            env=_SPAWN_ENV,
            start_new_session=True,
            preexec_fn=preexec,
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
    """Without a fresh root, jobs run as another uid in the host's filesystem: every ancestor of what they use
    (the jobs directory, the interpreter, the package) must let that uid pass."""
    if uid is None:
        return
    for ancestor in [*reversed(path.resolve().parents), path.resolve()]:
        if ancestor.exists() and not ancestor.stat().st_mode & 0o001:
            raise SandboxUnavailableError(
                f"Jobs run as uid {uid}, which cannot enter {ancestor} (mode {ancestor.stat().st_mode & 0o777:o}). "
                "Enable namespaces (the full sandbox shows jobs only what they need, wherever it lives), put it "
                f"under a directory others may traverse, or run `chmod o+x {ancestor}`."
            )


_detected: dict[tuple[object, ...], SandboxLevel] = {}
# What the last failed probe of each level printed (unshare's or the init's complaint), for a refusal's message.
_probe_failures: dict[SandboxLevel, str] = {}


async def detect_level(policy: SandboxPolicy, base: Path) -> SandboxLevel:
    """The best isolation that works here, found by starting a trivial sandboxed process at each level.

    The full level, once found, is remembered for the process (a lesser result is probed again next time: it
    may have been a passing fault). Each probe has its own directory, so two jobs that start together (the local
    runner's first two, say) never share one.
    """
    key = (policy.python, policy.uid_base, policy.unshare, policy.view, policy.setpriv)
    if key in _detected:
        return _detected[key]
    level = SandboxLevel.NONE
    candidates = [SandboxLevel.FULL, SandboxLevel.NETWORK] if policy.unshare else []
    for candidate in candidates:
        if await _probe(policy, candidate, base):
            level = candidate
            break
    if level is SandboxLevel.FULL:
        _detected[key] = level
    return level


async def _probe(policy: SandboxPolicy, level: SandboxLevel, base: Path) -> bool:
    # Without the task limit: the slot's uid may be at it already (a fork bomb of another runner on this host),
    # which says nothing about what the kernel allows.
    sandbox = Sandbox(replace(policy, rlimits={"core": 0}), level)
    name = f"probe-{level}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    job = await asyncio.to_thread(JobDir.create, base, name, sandbox.uid_for(0))
    try:
        proc = await sandbox.spawn(job, [policy.python, "-I", "-c", "pass"], slot_env={})
        output, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
        if proc.returncode == 0:
            _probe_failures.pop(level, None)
            return True
        _probe_failures[level] = output.decode(errors="replace").strip()
        log.warning("sandbox level %s is unavailable here: %s", level, _probe_failures[level])
    except (OSError, TimeoutError) as exc:
        _probe_failures[level] = str(exc)
        log.warning("sandbox level %s is unavailable here: %s", level, exc)
    finally:
        await asyncio.to_thread(job.remove)
    return False


def refusal_message(level: SandboxLevel, required: SandboxLevel, policy: SandboxPolicy) -> str:
    """Why a runner that requires `required` cannot serve at `level`: what the host or pod lacks, and what the
    full level's probe printed."""
    asked = f"RUNNER_SANDBOX_REQUIRED={required}" + (" (or RUNNER_REQUIRE_NAMESPACES=1)" if required == "full" else "")
    lines = [f"{asked} asks for sandbox level {required}, but this host allows only {level}. What is missing:"]
    lines += [f"- {line}" for line in full_sandbox_shortfalls(unshare=policy.unshare, as_root=policy.as_root)]
    for probed in (SandboxLevel.FULL, SandboxLevel.NETWORK):
        said = _probe_failures.get(probed)
        if said and not level.covers(probed):
            lines.append(f"- the {probed} sandbox's trial process said: {said.splitlines()[-1]}")
    lines.append(KUBERNETES_HINT)
    return "\n".join(lines)


async def open_sandbox(policy: SandboxPolicy, base: Path, *, required: bool = False) -> Sandbox:
    """Probe the host and return a Sandbox. Below the policy's required level (full where `required`), refuse with
    SandboxUnavailableError naming what is missing; below full otherwise, warn loudly: every job, ranked ones
    too, then runs with less isolation."""
    level = await detect_level(policy, base)
    least = SandboxLevel.FULL if required else policy.required
    if not level.covers(least):
        raise SandboxUnavailableError(refusal_message(level, least, policy))
    if level is not SandboxLevel.FULL:
        log.warning(
            "!!! SANDBOX DEGRADED: level %s. Every job, ranked ones too, runs with less isolation: submissions "
            "may reach the network, see other processes or read host files. Enable user, pid and mount "
            "namespaces, or set RUNNER_SANDBOX_REQUIRED=full to refuse to start like this. !!!",
            level,
        )
        # Without a fresh root the job's uid walks the host's own paths.
        for needed in (base, PACKAGE_ROOT, Path(os.path.realpath(policy.python))):
            check_reachable(needed, policy.uid_base)
    if policy.setpriv is None:
        log.info("setpriv --pdeathsig is unavailable: jobs are tied to the runner by a prctl before exec")
    if policy.uid_base is None and os.geteuid() != 0:
        log.info("jobs run as the daemon's own uid %d (not root, so no per-slot uid)", os.geteuid())
    return Sandbox(policy, level)
