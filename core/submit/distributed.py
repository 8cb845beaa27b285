"""The checks a submission's world size gets before it is stored: a distributed problem runs at one of the world
sizes it declares, as Python, in a mode a rank slot runs; a single-device problem runs on one device. Each refusal
says what to change."""

from __future__ import annotations

from contract.names import Language, Mode
from core.errors import InvalidSubmissionError
from problems.distributed.base import DistributedProblem
from problems.distributed.registry import distributed_problems
from problems.registry import canonical_slug


def distributed_problem(slug: str) -> DistributedProblem | None:
    """The built-in distributed problem `slug` names, or None for any other slug."""
    found = distributed_problems()
    return found.get(slug) or found.get(canonical_slug(slug))


def _sizes(sizes: tuple[int, ...]) -> str:
    return ", ".join(str(n) for n in sizes)


def check_world_size(slug: str, world_size: int, language: Language, mode: Mode) -> None:
    """Refuse (InvalidSubmissionError) a world size the problem does not take, or what a rank slot cannot run."""
    if isinstance(world_size, bool) or not isinstance(world_size, int):
        raise InvalidSubmissionError(f"The world size is {world_size!r}; give a whole number of ranks.")
    problem = distributed_problem(slug)
    if problem is None:
        if world_size != 1:
            raise InvalidSubmissionError(
                f"`{slug}` runs on one device; leave the world size out (or give 1), not {world_size}."
            )
        return
    if world_size not in problem.world_sizes:
        told = "no world size" if world_size == 1 else f"world size {world_size}"
        raise InvalidSubmissionError(
            f"`{problem.slug}` is a distributed problem for {_sizes(problem.world_sizes)} ranks, and the submission "
            f"has {told}: choose a world size of {_sizes(problem.world_sizes)}."
        )
    if language != "python":
        raise InvalidSubmissionError(
            f"Distributed solutions run as Python for now (over torch.distributed); `{problem.slug}` cannot take a "
            f"{language} file yet: submit a .py solution."
        )
    if mode == "profile":
        raise InvalidSubmissionError(
            f"Mode profile does not run distributed problems yet; submit `{problem.slug}` in mode test, benchmark or "
            "ranked."
        )


def board_world_size(slug: str, gpu_type: str) -> int:
    """The world size of the board (`slug`, `gpu_type`): a distributed problem's boards are keyed by rank pools
    (`cpux2`: 2 ranks, `contract.names.rank_pool`); every other problem's board is of one device."""
    problem = distributed_problem(slug)
    if problem is None:
        return 1
    for ranks in problem.world_sizes:
        if gpu_type.endswith(f"x{ranks}"):
            return ranks
    return 1
