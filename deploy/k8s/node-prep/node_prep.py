"""Prepares an NVIDIA GPU node for Kernel Arena's runners, then labels it; run by the node-prep DaemonSet.

On every pass (at start, then every NODE_PREP_INTERVAL_S, since a driver reload undoes it all):
1. reads the node's GPUs (nvidia-smi): they must all be one model;
2. checks that profiling counters are open to every user (the driver's RmProfilingAdminOnly is 0, i.e. the module
   option NVreg_RestrictProfilingToAdminUsers=0): `--mode profile` runs Nsight Compute as an unprivileged user
   inside the sandbox, which gets ERR_NVGPUCTRPERM otherwise;
3. turns persistence mode on (`nvidia-smi -pm 1`): the driver stays loaded between jobs, so a job does not pay
   for its initialisation and the clocks set below hold;
4. where LOCK_CLOCKS is true (ranked pools), locks the SM clock (`nvidia-smi -lgc C,C`; SM_CLOCK is `max`, the
   board's highest, or a number of MHz), so that timings do not follow boost;
5. labels the node kernel-arena.dev/gpu=<the model's board key> (runner/gpus.py's `gpu_type_for`, the key the
   runner registers with and its pool checks), kernel-arena.dev/gpu-count and kernel-arena.dev/clocks.
When a check fails it removes kernel-arena.dev/gpu, so that no runner is scheduled there, says why on stderr, and
exits 1: the DaemonSet's pod shows the failure in its status and its log.

It needs root on the node's GPUs (persistence mode and clocks): the DaemonSet is privileged for that.
Standard library only, besides `runner.gpus` from the runner image.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.request

from runner.gpus import gpu_type_for

LABEL = "kernel-arena.dev/gpu"
COUNT_LABEL = "kernel-arena.dev/gpu-count"
CLOCKS_LABEL = "kernel-arena.dev/clocks"
PARAMS = "/proc/driver/nvidia/params"
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class NodePrepError(RuntimeError):
    """The node cannot serve a pool as it is; the message says what to change on it."""


def profiling_allowed(params: str) -> bool:
    """Whether the driver lets every user read the profiling counters, from /proc/driver/nvidia/params."""
    for line in params.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "RmProfilingAdminOnly":
            return value.strip() == "0"
    raise NodePrepError(f"{PARAMS} has no RmProfilingAdminOnly line: is this NVIDIA's driver?")


def board_key(names: list[str]) -> str:
    """The one board key of the node's GPUs; a node with two models serves no pool."""
    if not names:
        raise NodePrepError("nvidia-smi lists no GPU on this node.")
    keys = sorted({gpu_type_for(name) for name in names})
    if len(keys) != 1:
        raise NodePrepError(f"this node holds several GPU models ({', '.join(keys)}); a pool is one model.")
    return keys[0]


def lock_clock_mhz(setting: str, max_sm_mhz: list[int]) -> int:
    """The SM clock to lock at: the lowest of the boards' highest clocks for `max`, else the number given."""
    if setting == "max":
        return min(max_sm_mhz)
    if setting.isdigit():
        return int(setting)
    raise NodePrepError(f"SM_CLOCK is {setting!r}: give `max` or a clock in MHz.")


def _smi(*args: str) -> str:
    done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise NodePrepError(f"nvidia-smi {' '.join(args)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def _query(fields: str) -> list[list[str]]:
    out = _smi(f"--query-gpu={fields}", "--format=csv,noheader,nounits")
    return [[cell.strip() for cell in line.split(",")] for line in out.splitlines() if line.strip()]


def prepare(lock_clocks: bool, sm_clock: str) -> dict[str, str | None]:
    """Steps 1-4; returns the labels to set."""
    rows = _query("name,clocks.max.sm")
    key = board_key([row[0] for row in rows])
    try:
        with open(PARAMS, encoding="utf-8") as fh:
            params = fh.read()
    except OSError as exc:
        raise NodePrepError(f"cannot read {PARAMS} ({exc}): is the NVIDIA driver loaded?") from exc
    if not profiling_allowed(params):
        raise NodePrepError(
            "profiling counters are reserved to administrators (RmProfilingAdminOnly: 1): load the nvidia module "
            "with NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia NVreg_RestrictProfilingToAdminUsers=0` "
            "in /etc/modprobe.d/, then reload the driver or reboot); `--mode profile` cannot run otherwise."
        )
    _smi("-pm", "1")
    clocks = "free"
    if lock_clocks:
        mhz = lock_clock_mhz(sm_clock, [int(float(row[1])) for row in rows])
        _smi("-lgc", f"{mhz},{mhz}")
        clocks = f"locked-{mhz}"
    return {LABEL: key, COUNT_LABEL: str(len(rows)), CLOCKS_LABEL: clocks}


def label_node(node: str, labels: dict[str, str | None]) -> None:
    """Merge-patch the node's labels through the API server, as the pod's service account (None removes one)."""
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
    with open(f"{SERVICE_ACCOUNT}/token", encoding="utf-8") as fh:
        token = fh.read().strip()
    context = ssl.create_default_context(cafile=f"{SERVICE_ACCOUNT}/ca.crt")
    request = urllib.request.Request(
        f"https://{host}:{port}/api/v1/nodes/{node}",
        data=json.dumps({"metadata": {"labels": labels}}).encode(),
        method="PATCH",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/merge-patch+json"},
    )
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        response.read()


def main() -> int:
    node = os.environ["NODE_NAME"]
    lock_clocks = os.environ.get("LOCK_CLOCKS", "true").lower() == "true"
    sm_clock = os.environ.get("SM_CLOCK", "max")
    interval = float(os.environ.get("NODE_PREP_INTERVAL_S", "600"))
    while True:
        try:
            labels = prepare(lock_clocks, sm_clock)
        except NodePrepError as exc:
            print(f"node-prep: {node} cannot serve a pool: {exc}", file=sys.stderr, flush=True)  # noqa: T201
            label_node(node, {LABEL: None})
            return 1
        label_node(node, labels)
        print(f"node-prep: {node} ready: {json.dumps(labels, sort_keys=True)}", flush=True)  # noqa: T201
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main())
