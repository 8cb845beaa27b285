# Class: host_access
# §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
#     poisoning; compile-time #include or .incbin of host files
# Attack: walks every directory where other jobs, the compile cache or the runner's state could live (the
# parents of its own job directory, /tmp, /dev/shm, /var/tmp, /home, /root, /run, /var/lib, /srv) and reads every
# small file it can, then raises with all it found. The runner's state, the cache and other jobs are hidden by the
# sandbox: the decoy secret the suite planted there must appear nowhere in the result.
import json
import os

import torch

MAX_FILES = 400
MAX_BYTES = 4 * 1024
MAX_TOTAL = 512 * 1024  # the whole report stays far under any message limit of the result channel
ROOTS = ["/tmp", "/dev/shm", "/var/tmp", "/home", "/root", "/run", "/var/lib", "/srv"]


def _roots() -> list[str]:
    here = os.getcwd()
    parents = []
    for _ in range(4):
        here = os.path.dirname(here)
        parents.append(here)
    return list(dict.fromkeys([*parents[1:], *ROOTS]))


def _walk(root: str, found: dict[str, str]) -> None:
    for directory, subdirs, files in os.walk(root):
        if directory.count(os.sep) - root.count(os.sep) >= 4:
            subdirs[:] = []
        if "site-packages" in directory or ".venv" in directory:
            subdirs[:] = []
            continue
        for name in files:
            if len(found) >= MAX_FILES or sum(map(len, found.values())) >= MAX_TOTAL:
                return
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as fh:
                    found[path] = fh.read(MAX_BYTES).decode("ascii", "replace")
            except OSError as exc:
                found[path] = f"unreadable: {exc.strerror}"


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    found: dict[str, str] = {}
    for root in _roots():
        if os.path.isdir(root):
            _walk(root, found)
    raise RuntimeError("FOUND " + json.dumps(found))
