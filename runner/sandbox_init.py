"""The first program inside a job's sandbox: it finishes the isolation, then executes the job's command.

Run as `python -I sandbox_init.py SPEC_JSON -- COMMAND...`, as the first process of fresh user, mount, pid,
network, IPC and UTS namespaces (made by `unshare`; see `runner.sandbox`). Where the namespaces are not
available it still sets the rlimits and the environment. It imports only the standard library, because it
runs before anything else and must not trust any path it has not set up itself.

With a mount namespace it:
1. replaces /tmp, /dev/shm and every hidden directory (the runner's state, homes, /run, ...) with an empty
   tmpfs, then puts back only this job's own directory, so other jobs and the compile cache are out of sight;
2. mounts a size-limited tmpfs on the job's scratch directory and shows synthetic /etc/passwd and friends;
3. makes every mount read-only except the scratch areas;
4. enters a second user and mount namespace, mapped to an unprivileged uid: the mounts above become locked
   (they cannot be unmounted to uncover what they hide), and the command keeps no capability after exec;
5. stays as pid 1 of the pid namespace, reaping orphans, and exits with the command's status (128 + signal
   when a signal ended it). When it exits, the kernel kills everything left in the namespace.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from typing import Any

SETUP_FAILED = 125

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_BIND = 1, 2, 4, 4096
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC = 1, os.O_CLOEXEC
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
# The mount API system calls have the same numbers on every architecture (they are newer than 5.0).
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
INNER_UID = 1000

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


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _tmpfs(target: str, size_mb: int, mode: str = "0755") -> None:
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode={mode}")


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


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def isolate_filesystem(spec: dict[str, Any]) -> None:
    """Steps 1 to 3 of the module docstring. Runs as root of the first user namespace."""
    job_dir: str = spec["job_dir"]
    scratch_mb: int = spec["scratch_mb"]
    job_tree = _open_tree(job_dir)
    # Trees taken before the tmpfs mounts hide them, and moved back on top afterwards.
    kept = [(path, _open_tree(path)) for path in spec.get("keep_paths", [])]
    for fresh in ("/tmp", "/dev/shm"):
        if os.path.isdir(fresh):
            _tmpfs(fresh, scratch_mb, "1777")
    for hidden in spec["hide_dirs"]:
        if os.path.isdir(hidden) and not os.path.islink(hidden):
            _tmpfs(hidden, 1)
    os.makedirs(job_dir, exist_ok=True)
    _move_mount(job_tree, job_dir)
    os.close(job_tree)
    for path, tree in kept:
        os.makedirs(path, exist_ok=True)
        _move_mount(tree, path)
        os.close(tree)
    _tmpfs(spec["scratch_dir"], scratch_mb, "0700")
    for rw_dir in spec["rw_binds"]:
        _mount(rw_dir, rw_dir, None, MS_BIND)
    for target, source in spec["mask_files"].items():
        if os.path.exists(target):
            _mount(source, target, None, MS_BIND)
    hostname = spec["hostname"].encode()
    _check(_libc.sethostname(hostname, ctypes.c_size_t(len(hostname))), "sethostname")
    _mount_setattr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, recursive=True)
    # /proc stays writable: the nested user namespace is mapped through /proc/self/uid_map.
    for writable in ["/proc", "/tmp", "/dev/shm", spec["scratch_dir"], *spec["rw_binds"]]:
        if os.path.isdir(writable):
            _mount_setattr(writable, 0, MOUNT_ATTR_RDONLY, recursive=False)


def drop_to_inner_user() -> None:
    """Step 4: a nested user namespace owned by an unprivileged uid locks every mount made above."""
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
        isolate_filesystem(spec)
    for path in spec["make_dirs"]:
        os.makedirs(path, mode=0o700, exist_ok=True)
    # Limits first: a user namespace records its creator's limits as the ceiling for everything inside.
    set_limits(spec["rlimits"])
    if spec["isolate_fs"]:
        drop_to_inner_user()
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    # If the runner side dies, the job dies with it (the daemon also kills the whole group).
    _check(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PDEATHSIG)")
    os.umask(0o077)
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
