"""The first program inside a job's sandbox: it finishes the isolation, then executes the job's command.

Run as `python -I sandbox_init.py SPEC_JSON -- COMMAND...`, as the first process of fresh mount, pid, network,
IPC and UTS namespaces (made by `unshare`; see `runner.host.sandbox`): as real root when the daemon is root, as root
of a fresh user namespace otherwise. Where the namespaces are not available it still drops to the job's uid
and sets the rlimits and the environment. It imports only the standard library, because it runs before
anything else and must not trust any path it has not set up itself.

With a mount namespace it:
1. builds a fresh root on a tmpfs and pivots into it: an allowlist, not a denylist. The root holds read-only
   binds of /usr (and /bin, /lib* as on the host), the interpreter's install trees, the package's own code
   (runner/ and problems/, never the rest of the checkout), the CUDA toolkit, the dynamic loader's library
   directories (a GPU host's driver libraries), a minimal /etc, a /dev with the standard nodes and every
   /dev/nvidia* node, a fresh /proc (/proc/driver/nvidia read-only), /sys read-only, fresh /tmp and /dev/shm,
   and the job's own directory with a size-limited tmpfs on its scratch area. Nothing else of the host exists
   there: no homes, no other jobs, no runner state, no secret beside a masked one;
2. makes every mount read-only (and nosuid; nodev but for the device nodes) except the scratch areas;
3. drops privilege: as real root, to the job's uid (setgroups, setgid, setuid: no capability is left, and
   RLIMIT_NPROC applies); as root of a user namespace, into a second user namespace mapped to an unprivileged
   uid, which locks the mounts. Either way `no_new_privs` is set and nothing can be unmounted to uncover what
   the new root does not show;
4. re-arms the parent-death signal (a credential change clears it) and checks that its owner still lives;
   where the spec asks for `loopback` (a distributed job, whose rank processes meet over gloo's TCP), it first
   brings up the loopback interface of the job's own network namespace, which reaches no other job or host;
5. stays as pid 1 of the pid namespace, reaping orphans, and exits with the command's status (128 + signal
   when a signal ended it). When it exits, the kernel kills everything left in the namespace.

Kept as one module: it runs before anything else and imports only the standard library, so it cannot import a
helper from a path of the project that it has not set up itself.
"""

from __future__ import annotations

import ctypes
import fcntl
import glob
import json
import os
import platform
import resource
import select
import signal
import socket
import struct
import sys
from typing import Any

SETUP_FAILED = 125

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 4096, 16384, 1 << 18
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC = 1, os.O_CLOEXEC
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC = 0x1, 0x2, 0x4, 0x8
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
# The mount API system calls have the same numbers on every architecture (they are newer than 5.0);
# pivot_root, older, does not (41 is the generic table's, used by arm64 and riscv64).
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
SYS_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "ppc64le": 203, "ppc64": 203, "s390x": 217}.get(platform.machine(), 41)
INNER_UID = 1000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
IFREQ = "16sH14x"  # struct ifreq with its flags member: the name, the flags, padding to 32 bytes
# Where the new root is assembled before the pivot: a tmpfs over it in this mount namespace only, so the host's
# /tmp (where job directories and virtual environments often live) stays reachable under the old root.
STAGE = "/tmp"
NEW, OLD = "/newroot", "/oldroot"
DEV_NODES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1"}
DEV_LINKS["stderr"] = "/proc/self/fd/2"

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxSetupError(RuntimeError):
    """A step of the sandbox setup failed; the job must not run half-isolated."""


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise SandboxSetupError(f"{what}: {os.strerror(err)}")
    return result


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _tmpfs(target: str, size_mb: int, mode: str = "0755", owner: int | None = None) -> None:
    options = f"size={size_mb}m,mode={mode}" + (f",uid={owner},gid={owner}" if owner is not None else "")
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def _open_tree(path: str) -> int:
    flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
    fd = _libc.syscall(ctypes.c_long(SYS_OPEN_TREE), ctypes.c_int(AT_FDCWD), path.encode(), ctypes.c_uint(flags))
    return _check(fd, f"open_tree {path}")


def _move_mount(fd: int, target: str) -> None:
    result = _libc.syscall(
        ctypes.c_long(SYS_MOVE_MOUNT),
        ctypes.c_int(fd),
        b"",
        ctypes.c_int(AT_FDCWD),
        target.encode(),
        ctypes.c_uint(MOVE_MOUNT_F_EMPTY_PATH),
    )
    _check(result, f"move_mount {target}")


def _mount_setattr(path: str, attr_set: int, attr_clr: int, recursive: bool) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    result = _libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        path.encode(),
        ctypes.c_uint(AT_RECURSIVE if recursive else 0),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(result, f"mount_setattr {path}")


def _pivot_root(new_root: str, put_old: str) -> None:
    result = _libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT), new_root.encode(), put_old.encode())
    _check(result, f"pivot_root {new_root}")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def _mountpoint(target: str, directory: bool) -> None:
    """An empty directory or file to mount on (nothing to do where the path exists already)."""
    if os.path.lexists(target):
        return
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if directory:
        os.mkdir(target, 0o755)
    else:
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _bind(source: str, target: str, *, devices: bool = False, extra: int = 0) -> None:
    """Bind `source` (and the mounts under it) on `target` in the new root, nosuid and (but for device nodes)
    nodev. Read-only comes with the final pass over the whole root."""
    _mountpoint(target, os.path.isdir(source))
    tree = _open_tree(source)
    try:
        _move_mount(tree, target)
    finally:
        os.close(tree)
    _mount_setattr(target, MOUNT_ATTR_NOSUID | (0 if devices else MOUNT_ATTR_NODEV) | extra, 0, recursive=True)


def _symlink(target: str, path: str) -> None:
    if not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        os.symlink(target, path)


def _build_dev(scratch_mb: int) -> None:
    """A minimal /dev: the standard nodes and every GPU node (the slot's GPU is chosen by CUDA_VISIBLE_DEVICES)."""
    dev = NEW + "/dev"
    _mountpoint(dev, True)
    _tmpfs(dev, 1, "0755")
    nodes = [OLD + "/dev/" + name for name in DEV_NODES]
    nodes += [*sorted(glob.glob(OLD + "/dev/nvidia*")), OLD + "/dev/dri"]
    for node in nodes:
        target = NEW + node[len(OLD) :]
        if os.path.islink(node):
            _symlink(os.readlink(node), target)
        elif os.path.exists(node):
            _bind(node, target, devices=True)
    for name, target in DEV_LINKS.items():
        _symlink(target, f"{dev}/{name}")
    _mountpoint(dev + "/shm", True)
    _tmpfs(dev + "/shm", scratch_mb, "1777")


def _build_proc_and_sys() -> None:
    """The fresh /proc that `unshare --mount-proc` made (only this job's processes), and the host's /sys, which
    CUDA and NVML read. The driver's /proc entries stay read-only even though /proc itself is writable."""
    _bind(OLD + "/proc", NEW + "/proc", extra=MOUNT_ATTR_NOEXEC)
    nvidia = NEW + "/proc/driver/nvidia"
    if os.path.isdir(nvidia):
        _mount(nvidia, nvidia, None, MS_BIND | MS_REC)
    if os.path.isdir(OLD + "/sys"):
        _bind(OLD + "/sys", NEW + "/sys", extra=MOUNT_ATTR_NOEXEC)


def build_root(spec: dict[str, Any]) -> None:
    """Step 1 of the module docstring. Runs as root of the mount namespace (real root, or of a user namespace)."""
    os.umask(0o022)
    job_dir: str = spec["job_dir"]
    scratch_mb: int = spec["scratch_mb"]
    uid: int | None = spec.get("uid")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here may reach the host's mount namespace
    _tmpfs(STAGE, 1, "0755")
    os.mkdir(STAGE + NEW, 0o755)
    os.mkdir(STAGE + OLD, 0o755)
    _tmpfs(STAGE + NEW, 8, "0755")
    _pivot_root(STAGE, STAGE + OLD)
    os.chdir("/")
    # Fresh writable areas first: an install or a job directory under /tmp is bound on top of them.
    _mountpoint(NEW + "/tmp", True)
    _tmpfs(NEW + "/tmp", scratch_mb, "1777")
    for path in spec["binds"]:
        if os.path.lexists(OLD + path):  # an optional path (a driver directory, say) may be missing
            _bind(OLD + path, NEW + path)
    for path, target in spec["links"]:
        _symlink(target, NEW + path)
    for path, source in spec["etc_files"].items():
        _bind(OLD + source, NEW + path)
    for path in spec["masks"]:  # the secret file, the runner's state, where a bound tree holds them
        target = NEW + path
        if os.path.isdir(target) and not os.path.islink(target):
            _tmpfs(target, 1, "0755")
        elif os.path.lexists(target):
            _bind(OLD + spec["empty_file"], target)
    _bind(OLD + job_dir, NEW + job_dir)
    _tmpfs(NEW + spec["scratch_dir"], scratch_mb, "0700", uid)
    for rw_dir in spec["rw_binds"]:
        _mount(NEW + rw_dir, NEW + rw_dir, None, MS_BIND)
    _build_dev(scratch_mb)
    _build_proc_and_sys()
    hostname = spec["hostname"].encode()
    _check(_libc.sethostname(hostname, ctypes.c_size_t(len(hostname))), "sethostname")
    # Into the new root; the staging tmpfs, and the host's root under it, go away with one lazy unmount.
    os.chdir(NEW)
    _pivot_root(".", ".")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount the host's root")
    os.chdir("/")
    _mount_setattr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, recursive=True)
    # /proc stays writable: the nested user namespace is mapped through /proc/self/uid_map.
    for writable in ["/proc", "/tmp", "/dev/shm", spec["scratch_dir"], *spec["rw_binds"]]:
        _mount_setattr(writable, 0, MOUNT_ATTR_RDONLY, recursive=False)


def bound_shared_memory(spec: dict[str, Any]) -> None:
    """In the job's own IPC namespace, before privilege goes: cap its SysV shared memory at the job's limit
    (kernel.shm* are per namespace), and hand the runner /proc/sysvipc/shm opened here, so that the runner can
    count segments no process maps. An older kernel may refuse the sysctls inside a user namespace: the
    runner's count still stops the job, so that is no reason to fail it."""
    limit: int | None = spec.get("shm_limit_bytes")
    if limit:
        pages = -(-limit // os.sysconf("SC_PAGE_SIZE"))
        for name, value in (("shmmax", limit), ("shmall", pages)):
            try:
                _write(f"/proc/sys/kernel/{name}", f"{value}\n")
            except OSError:
                pass
    report: int | None = spec.get("sysv_report_fd")
    if report is None:
        return
    channel = socket.socket(fileno=report)
    try:
        listing = os.open("/proc/sysvipc/shm", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        listing = -1  # a kernel without SysV IPC: nothing to count
    try:
        if listing >= 0:
            socket.send_fds(channel, [b"sysv"], [listing])
    finally:
        if listing >= 0:
            os.close(listing)
        channel.close()  # before the job's command starts: it must not reach the runner's end


def bring_loopback_up() -> None:
    """Set `lo` up in this (fresh) network namespace, as a privileged step before the drop: a new namespace's
    loopback is down, and gloo finds no interface for 127.0.0.1 without it."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        current = fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, struct.pack(IFREQ, b"lo", 0))
        flags = struct.unpack(IFREQ, current)[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags | IFF_UP))


def drop_to_job_user(uid: int) -> None:
    """Step 3 as real root: the job's own uid and group, no supplementary groups; capabilities go with uid 0."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SandboxSetupError(f"could not become uid {uid}")


def drop_to_inner_user() -> None:
    """Step 3 in a user namespace: a nested one owned by an unprivileged uid locks every mount made above."""
    outer_uid, outer_gid = os.getuid(), os.getgid()
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{INNER_UID} {outer_uid} 1\n")
    _write("/proc/self/gid_map", f"{INNER_UID} {outer_gid} 1\n")


def set_limits(limits: dict[str, int]) -> None:
    """rlimits are inherited by everything the job starts and cannot be raised again without privilege."""
    for name, value in limits.items():
        which = getattr(resource, f"RLIMIT_{name.upper()}")
        resource.setrlimit(which, (value, value))


def owner_gone() -> bool:
    """Whether the runner side has died: it holds the only read end of our stdout pipe. Checked once the
    parent-death signal is armed again, so a death in between cannot leave the job running."""
    poller = select.poll()
    poller.register(1, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _drop_capabilities() -> None:
    """capset(2) with empty sets: the init process needs no privilege once the job's process is started."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


def _exit_status(status: int) -> int:
    # A shell's convention: 128 + signal. The runner reads it back as "stopped by that signal".
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)


def run_as_init(command: list[str], env: dict[str, str]) -> int:
    """Be pid 1 of the job's pid namespace: start the command, reap every orphan, exit with its status.

    The command must not be pid 1 itself: the kernel drops signals that pid 1 has no handler for, so an
    abort() or a fatal signal would not end it the usual way.
    """
    child = os.fork()
    if child == 0:
        try:
            os.execve(command[0], command, env)
        finally:
            os._exit(127)
    os.closerange(3, 65536)  # hold no pipe open: its end-of-file tells the runner that the job is gone
    _drop_capabilities()
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(DUMPABLE)")
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            return _exit_status(status)


def run(spec: dict[str, Any], command: list[str]) -> int:
    if spec["isolate_fs"]:
        bound_shared_memory(spec)
        build_root(spec)
    # Limits first: a user namespace records its creator's limits as the ceiling for everything inside.
    set_limits(spec["rlimits"])
    if spec.get("loopback"):
        bring_loopback_up()
    uid = spec.get("uid")
    if uid is not None:
        drop_to_job_user(uid)
    elif spec["isolate_fs"]:
        drop_to_inner_user()
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    # If the runner side dies, the job dies with it (the daemon also kills the whole group). The uid change
    # above cleared what `unshare --kill-child` or `setpriv --pdeathsig` had set.
    _check(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PDEATHSIG)")
    if owner_gone():
        return SETUP_FAILED
    os.umask(0o077)
    for path in spec["make_dirs"]:
        os.makedirs(path, mode=0o700, exist_ok=True)
    os.chdir(spec["cwd"])
    if spec["isolate_fs"]:  # with a pid namespace, this process is its pid 1
        return run_as_init(command, spec["env"])
    os.execve(command[0], command, spec["env"])


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: sandbox_init.py SPEC_JSON -- COMMAND...\n")
        return SETUP_FAILED
    try:
        return run(json.loads(argv[1]), argv[3:])
    except (OSError, SandboxSetupError, ValueError, KeyError) as exc:
        sys.stderr.write(f"sandbox setup failed: {exc}\n")
        return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
