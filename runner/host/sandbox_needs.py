"""What this host or pod lacks for the full sandbox, read from /proc, for the message of a runner that refuses to
start (RUNNER_SANDBOX_REQUIRED). Each line names the missing piece and the setting that gives it.

The full sandbox (runner/host/sandbox.py, sandbox_init.py) needs: `unshare` from util-linux; new user (when the
daemon is not root), network, pid, mount, IPC and UTS namespaces; a fresh /proc mounted in them; tmpfs mounts,
bind mounts, pivot_root and mount_setattr; and, when not root, a nested user namespace. Inside a container each of
these can be taken away: by the kernel's switches for user namespaces, by a seccomp filter, by an AppArmor
profile, by a /proc whose paths the runtime masked (the kernel then refuses a fresh /proc in a user namespace),
or, for a root daemon, by the lack of CAP_SYS_ADMIN. docs/kubernetes.md states the pod settings that allow it.
"""

from __future__ import annotations

from pathlib import Path

CAP_SYS_ADMIN = 21
# Mounts under /proc that hosts have anyway and that hide nothing (an empty directory), so the kernel allows a
# fresh /proc beside them.
_HARMLESS_PROC_MOUNTS = ("/proc/sys/fs/binfmt_misc",)
KUBERNETES_HINT = (
    "In Kubernetes the runner pod needs hostUsers: false, and on its container procMount: Unmasked, "
    "seccompProfile Unconfined, appArmorProfile Unconfined, runAsNonRoot (docs/kubernetes.md)."
)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _status_field(name: str, status: str | None) -> str | None:
    for line in (status or "").splitlines():
        key, _, value = line.partition(":")
        if key == name:
            return value.strip()
    return None


def in_initial_user_namespace(uid_map: str | None) -> bool:
    """Whether /proc/self/uid_map is the identity map of the whole range (the host's own user namespace)."""
    return (uid_map or "").split() == ["0", "0", "4294967295"]


def masked_proc_paths(mountinfo: str | None) -> list[str]:
    """Mount points strictly under /proc: a container runtime's masked and read-only paths (/proc/kcore,
    /proc/sys, ...). Where any is over something, the kernel refuses to mount a fresh /proc in a user namespace."""
    found: list[str] = []
    for line in (mountinfo or "").splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[4].startswith("/proc/") and fields[4] not in _HARMLESS_PROC_MOUNTS:
            found.append(fields[4])
    return sorted(set(found))


def apparmor_profile() -> str | None:
    """The AppArmor profile confining this process, None where there is none (or AppArmor is off)."""
    label = _read("/proc/self/attr/apparmor/current")
    if label is None and Path("/sys/module/apparmor").exists():
        label = _read("/proc/self/attr/current")
    if not label or label.startswith("unconfined"):
        return None
    return label


def full_sandbox_shortfalls(*, unshare: str | None, as_root: bool) -> list[str]:
    """Each thing this host or pod lacks for the full sandbox, as a line that says how to give it. Read only when
    the full level's probe failed: a filter or profile may be present and still allow what the sandbox does."""
    if unshare is None:
        return ["util-linux `unshare` is not on the PATH: install util-linux (and setpriv) where the runner runs."]
    found: list[str] = []
    status = _read("/proc/self/status")
    uid_map = _read("/proc/self/uid_map")
    makes_user_namespace = not as_root or not in_initial_user_namespace(uid_map)
    if not as_root:
        if _read("/proc/sys/user/max_user_namespaces") == "0":
            found.append("user namespaces are off (user.max_user_namespaces=0): set it above 0 on the host.")
        if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
            found.append("unprivileged user namespaces are off: set kernel.unprivileged_userns_clone=1 on the host.")
        if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
            found.append(
                "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1): "
                "set it to 0 on the host."
            )
    else:
        capabilities = int(_status_field("CapEff", status) or "0", 16)
        if not capabilities >> CAP_SYS_ADMIN & 1:
            found.append(
                "the runner runs as root without CAP_SYS_ADMIN: run it as a non-root user (the sandbox then makes "
                "its own user namespace, needing no capability), or grant SYS_ADMIN."
            )
    if _status_field("Seccomp", status) == "2":
        found.append(
            "a seccomp filter confines the runner (a container runtime's default profile refuses unshare, mount and "
            "pivot_root): run the runner with seccomp unconfined."
        )
    profile = apparmor_profile()
    if profile is not None:
        found.append(
            f"the AppArmor profile {profile} confines the runner (a container runtime's default profile denies "
            "mount): run the runner unconfined by AppArmor."
        )
    masked = masked_proc_paths(_read("/proc/self/mountinfo"))
    if makes_user_namespace and masked:
        shown = ", ".join(masked[:6]) + (", ..." if len(masked) > 6 else "")
        found.append(
            f"/proc has masked or read-only paths ({shown}), so the kernel refuses a fresh /proc in a user "
            "namespace: unmask /proc (in Kubernetes, procMount: Unmasked, which needs hostUsers: false)."
        )
    return found
