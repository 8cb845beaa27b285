"""One rank of a distributed run: loads the submission, joins the group, runs and times every sample.

Run as `python -m runner.distributed.rank JOB RANK`: the harness starts one per rank. This module runs next to
the submission, so it imports nothing of the harness (tests/runner/test_distributed_harness.py walks its imports)
and never sees an expected output: it reads its inputs and writes its outputs and times (`exchange`).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from runner.distributed.device_release import DeviceRelease
from runner.distributed.exchange import (
    PEER_STOPPED,
    CaseResult,
    CaseWork,
    error_path,
    result_path,
    spec_path,
    store_path,
    work_path,
)

logger = logging.getLogger(__name__)
POISON_BYTE = 0xFF


class PeerStoppedError(RuntimeError):
    """The release failed: another rank stopped (its own error says why), not this rank's call."""


def load_solution(path: Path) -> Callable[..., Any]:
    """The `solution` function of the submission's Python file."""
    spec = importlib.util.spec_from_file_location("distributed_solution", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    solution = getattr(module, "solution", None)
    if not callable(solution):
        raise ImportError(f"{path.name} defines no function `solution`")
    return solution  # type: ignore[no-any-return]


def poisoned_outputs(work: CaseWork, device: str) -> list[Any]:
    """Fresh output buffers, every byte set to the poison pattern, so an element never written fails."""
    import torch

    buffers = []
    for shape, dtype in work["outputs"]:
        buffer = torch.empty(tuple(shape), dtype=getattr(torch, dtype), device=device)
        buffer.reshape(-1).view(torch.uint8).fill_(POISON_BYTE)
        buffers.append(buffer)
    return buffers


def call_arguments(work: CaseWork, inputs: list[Any], outputs: list[Any], arrays: list[Any]) -> list[Any]:
    """The call's arguments in ABI order, from the case's layout."""
    sources = {"input": inputs, "output": outputs, "array": arrays}
    return [value if kind == "value" else sources[kind][value] for kind, value in work["layout"]]


def _pass_release(release: Any) -> None:
    import torch.distributed as dist

    try:
        dist.barrier(group=release)
    except RuntimeError as exc:  # told apart from the submission's own failure: the cause is a peer's
        raise PeerStoppedError(f"{PEER_STOPPED}: {exc}") from exc


class HostWindow:
    """The CPU's window: the ranks pass a barrier on the harness's own group, then each starts its clock (gloo's
    calls are synchronous, so the call's work is inside the call)."""

    def __init__(self, release: Any) -> None:
        self.release = release
        self.start = 0

    def open(self) -> None:
        _pass_release(self.release)
        self.start = time.perf_counter_ns()

    def close(self) -> int:
        return time.perf_counter_ns() - self.start

    @property
    def kind(self) -> str:
        return "host barrier"


class DeviceWindow:
    """A GPU's window: the stream armed on the job's release flag, the ranks past a host barrier while their GPUs
    wait, the flag written, and the call timed by events on this rank's own device (device_release.py)."""

    def __init__(self, release: Any, flag: DeviceRelease) -> None:
        import torch

        self.release, self.flag = release, flag
        self.value = 0
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def open(self) -> None:
        self.value += 1
        self.flag.arm(self.value)
        self.start.record()
        _pass_release(self.release)
        self.flag.fire(self.value)

    def close(self) -> int:
        self.stop.record()
        self.stop.synchronize()
        return round(self.start.elapsed_time(self.stop) * 1e6)

    @property
    def kind(self) -> str:
        return self.flag.kind


def run_case(
    solution: Callable[..., Any],
    work: CaseWork,
    rank: int,
    world_size: int,
    release: Any,
    window: HostWindow | DeviceWindow,
    device: str,
) -> CaseResult:
    """Every sample of one case: buffers made before the window, the ranks released together, one call timed.

    What comes back of each sample is its outputs as they stood when this rank's call returned (a copy taken on
    the spot), so work that finishes later, this rank's own thread or a peer's, never counts. The buffers are read
    again after the last sample, once every rank has passed a final release: any byte that changed after its call
    returned is proof of work outliving the call, and the harness gives that its integrity verdict."""
    import torch.distributed as dist

    group = dist.group.WORLD
    times_ns: list[int] = []
    returned: list[list[Any]] = []
    live: list[list[Any]] = []
    replaced: list[list[bool]] = []
    memory = work.get("array_memory") or ["device"] * len(work["arrays"])
    arrays = [a.to(device) if where == "device" else a for a, where in zip(work["arrays"], memory, strict=True)]
    for index, host_inputs in enumerate(work["inputs"]):
        # Outside the window: the inputs on this rank's device, fresh poisoned outputs, the arguments laid out.
        inputs = [t.to(device) for t in host_inputs]
        outputs = poisoned_outputs(work, device)
        # The harness reads through views of its own: a call that swaps a buffer's storage (`set_`, to memory a
        # peer maps) changes the solution's tensor, not these.
        views = [buffer.view(buffer.shape) for buffer in outputs]
        pointers = [buffer.data_ptr() for buffer in outputs]
        args = call_arguments(work, inputs, outputs, arrays)
        window.open()
        solution(*args, rank, world_size, group)
        elapsed = window.close()
        # Outside the window, at once: the outputs as the call left them.
        returned.append([view.to("cpu", copy=True) for view in views])
        swapped = zip(outputs, pointers, views, strict=True)
        replaced.append([b.data_ptr() != ptr or b.shape != v.shape for b, ptr, v in swapped])
        if index >= work["warmup"]:
            times_ns.append(elapsed)
        live.append(views)
    # Every rank's calls of this case have returned once all pass here: what a peer or a thread of this rank
    # writes into these buffers from now on is too late to have counted, and is seen as a change.
    _pass_release(release)
    after = [[view.to("cpu", copy=True) for view in views] for views in live]
    return {"times_ns": times_ns, "outputs": returned, "after": after, "replaced": replaced, "release": window.kind}


def run_rank(job: Path, rank: int) -> None:
    """Join the group, then run every case the harness wrote for this rank, writing each result as it ends."""
    import torch
    import torch.distributed as dist

    spec = json.loads(spec_path(job).read_text(encoding="utf-8"))
    world_size, timeout = int(spec["world_size"]), timedelta(seconds=float(spec["timeout_s"]))
    on_gpu, language = spec.get("device", "cpu") == "cuda", spec.get("language", "python")
    torch.set_num_threads(1)  # N ranks share the host's cores: one thread each keeps them from contending
    device = "cpu"
    options: dict[str, Any] = {}
    if on_gpu:
        local = rank % torch.cuda.device_count()
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
        if language == "python":
            options["device_id"] = torch.device(device)
    # A Python solution on GPUs gets NCCL's group; a CUDA one gets the harness's communicator instead.
    backend = "nccl" if on_gpu and language == "python" else "gloo"
    dist.init_process_group(
        backend, init_method=f"file://{store_path(job)}", rank=rank, world_size=world_size, timeout=timeout, **options
    )
    # The harness's own group, so that the release never shares a sequence of collectives with the submission's.
    release = dist.new_group(backend="gloo", timeout=timeout)
    window = DeviceWindow(release, DeviceRelease.open(job)) if on_gpu else HostWindow(release)
    try:
        solution: Callable[..., Any] | None = None
        for case in range(int(spec["cases"])):
            work: CaseWork = torch.load(work_path(job, rank, case), weights_only=True)
            if solution is None:
                solution = _load(spec, work, rank, world_size, release)
            result = run_case(solution, work, rank, world_size, release, window, device)
            torch.save(result, result_path(job, rank, case))
    finally:
        dist.destroy_process_group()


def _load(spec: dict[str, Any], work: CaseWork, rank: int, world_size: int, release: Any) -> Callable[..., Any]:
    if spec.get("language", "python") != "cuda":
        return load_solution(Path(spec["solution"]))
    from runner.distributed.cuda_solution import load_cuda_solution, prepare_rank

    context = prepare_rank(rank, world_size, int(spec["symmetric_bytes"]), release)
    return load_cuda_solution(Path(spec["solution"]), context, work["value_types"])


def main(argv: list[str]) -> int:
    job, rank = Path(argv[0]), int(argv[1])
    try:
        run_rank(job, rank)
    except BaseException:  # the submission's failure is reported to the harness, whatever it raised
        error_path(job, rank).write_text(traceback.format_exc(), encoding="utf-8")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
