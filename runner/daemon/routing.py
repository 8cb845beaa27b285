"""Which path a job takes on this runner: one device (today's judge and launcher), or a slot of N ranks for a
distributed problem; and the refusal, in words that say what to fix, of a job this runner cannot run as asked.

Checked when the job is posted, before it queues: a job no slot here can take is refused at once (400), not
failed after its wait. Reads only the problem registry's metadata, never torch, so the daemon may call it.
"""

from __future__ import annotations

from collections.abc import Sequence

from contract.wire import JobRequest
from problems.distributed.registry import distributed_problems
from runner.host.devices import Slot


class UnroutableJobError(ValueError):
    """This runner cannot run the job as it was asked for; the message says what to change."""


def _sizes(values: Sequence[int]) -> str:
    return ", ".join(str(n) for n in sorted(set(values)))


def route_job(request: JobRequest, rank_slots: Sequence[Slot], runner: str) -> int:
    """The ranks the job runs on here: 1 for the one-device path, or N for a distributed problem on a slot of N
    ranks. Raises UnroutableJobError for a combination that cannot run here."""
    slug, world_size = request.problem_slug, request.world_size
    problem = distributed_problems().get(slug) if request.problem_source is None else None
    if problem is None:
        if world_size != 1:
            raise UnroutableJobError(
                f"{slug} runs on one device, and the job asks for world_size {world_size}: send world_size 1 (or "
                "leave it out), or choose a distributed problem."
            )
        return 1
    if world_size not in problem.world_sizes:
        told = "no world_size (so 1)" if world_size == 1 else f"world_size {world_size}"
        raise UnroutableJobError(
            f"{slug} is a distributed problem for {_sizes(problem.world_sizes)} ranks, and the job has {told}: set "
            f"world_size to one of {_sizes(problem.world_sizes)}."
        )
    if request.language != "python":
        raise UnroutableJobError(
            f"{slug}: distributed solutions run as Python for now (a CUDA source is not compiled against NCCL yet); "
            "submit a Python file."
        )
    if request.mode == "profile":
        raise UnroutableJobError(f"{slug}: mode profile does not run distributed problems yet; use test or benchmark.")
    if request.problem_version is not None and request.problem_version != problem.version:
        raise UnroutableJobError(
            f"This runner has version {problem.version} of {slug}; the job is for version {request.problem_version}. "
            "Submit again to run on the current version."
        )
    if request.dtype not in problem.dtypes:
        raise UnroutableJobError(f"{slug} does not support {request.dtype}; choose one of {', '.join(problem.dtypes)}.")
    if request.device_kind == "gpu":
        raise UnroutableJobError(
            f"{slug}: this runner's rank slots run on the CPU (gloo), and the job asks for GPUs: send device_kind "
            "auto or cpu, or send it to a runner with GPU rank slots."
        )
    if not any(slot.ranks == world_size for slot in rank_slots):
        offered = f"its rank slots have {_sizes([s.ranks for s in rank_slots])} ranks" if rank_slots else "it has none"
        raise UnroutableJobError(
            f"Runner {runner} has no slot of {world_size} ranks ({offered}; RUNNER_RANK_SLOTS sets them): send the "
            f"job to a runner with one, or choose a world_size it offers."
        )
    return world_size
