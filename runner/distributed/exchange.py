"""The files between the harness and its rank processes: where each rank's work and results lie, and what they hold.

Nothing here holds an expected output: the harness computes those in its own process and never writes them down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

# An entry of a call's argument layout, in ABI order: ("input", i), ("output", i), ("value", v) for a scalar, or
# ("array", i) for the i-th constant array tensor. The rank builds the call from it without the problem's rules.
LayoutEntry = tuple[str, Any]
# How a rank's error begins when it only saw a peer stop, so the harness can name the rank that stopped first.
PEER_STOPPED = "a peer rank stopped"
# The harness's own words for a rank that left no error of its own (`harness.wait_for_ranks`): the exit status of
# one that wrote nothing to stderr, and how a rank it killed at its deadline begins (it kills the rest with it).
# The runner reads them back from the result's log to tell a rank killed from outside the job from a submission
# that crashed (runner/job/distributed.py); tests/runner/test_distributed_faults.py holds the harness to them.
RANK_EXITED = "exited with status "
RANK_TIMED_OUT = "timed out: "
# How the result's log heads each rank's error (runner/distributed/job.py: `job_result`).
RANK_LOG_HEADER = "rank {rank}:"


class CaseWork(TypedDict):
    """One case for one rank: fresh inputs per sample, the outputs to allocate, the constant arrays, the layout."""

    name: str
    inputs: list[list[Any]]  # per sample, the input tensors (the first `warmup` samples are not timed)
    outputs: list[tuple[list[int], str]]  # shape and torch dtype name of each output buffer
    arrays: list[Any]  # the constant arrays as tensors (host arrays stay on the CPU)
    layout: list[LayoutEntry]
    warmup: int
    value_types: list[str]  # the C type of each ("value", v) entry, in order (a CUDA solution's scalars)
    array_memory: list[str]  # "device" or "host" per constant array: on a GPU run a device array moves there


class CaseResult(TypedDict, total=False):
    """What a rank sends back for one case: its own clock's nanoseconds per timed sample, and every sample's
    outputs (warm-up included) as they stood when its call returned, the same buffers read again after the case's
    last release, and whether each call swapped an output's storage; or the error that stopped it."""

    times_ns: list[int]
    outputs: list[list[Any]]
    after: list[list[Any]]
    replaced: list[list[bool]]
    release: str  # how the ranks were released: "device", "host barrier and spin" (a GPU), "host barrier"
    error: str


def work_path(job: Path, rank: int, case: int) -> Path:
    return job / f"rank{rank}" / f"case{case}.pt"


def result_path(job: Path, rank: int, case: int) -> Path:
    return job / f"rank{rank}" / f"result{case}.pt"


def error_path(job: Path, rank: int) -> Path:
    return job / f"rank{rank}" / "error.txt"


def store_path(job: Path) -> Path:
    """The gloo rendezvous (a FileStore): no port to pick, and nothing outside the job's directory."""
    return job / "rendezvous"


def spec_path(job: Path) -> Path:
    return job / "spec.json"
