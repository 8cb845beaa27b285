"""Hostile solutions through the CPU multi-rank harness, each caught: a rank that returns early and leaves its
part to a thread of its own, a rank whose peer writes its output through a file they share, and a result cached
across samples. What the harness can prove on the CPU is in docs/distributed.md ("Hostile solutions")."""

from __future__ import annotations

from pathlib import Path

import pytest

from problems.distributed.registry import get_distributed_problem
from runner.distributed.harness import changed_elements, run_distributed
from runner.distributed.rank import POISON_BYTE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "distributed"
# One warm-up and two timed samples: three calls per case, so a cache has two samples to be wrong on.
SAMPLES = 2


def test_a_rank_that_returns_before_its_thread_writes_is_caught() -> None:
    problem = get_distributed_problem("all-gather")
    run = run_distributed(problem, EXAMPLES / "all_gather_returns_early.py", 2, "float32", cases=[0], samples=SAMPLES)
    assert not run.rank_errors, run.rank_errors
    assert not run.passed and run.verdict == "integrity"
    assert {f.rank for f in run.failures} == {0}  # rank 1 did its own part honestly
    wrong = {f.sample for f in run.failures if f.verdict == "wrong_answer"}
    late = {f.sample for f in run.failures if f.verdict == "integrity"}
    # Every sample's output was still poisoned when rank 0's call returned: the late write never counts.
    assert wrong == {0, 1, 2}
    # Each thread is joined in the next call, so at least every sample but the last was seen changing afterwards.
    assert {0, 1} <= late
    assert all(
        "changed after this rank's call returned" in f.message for f in run.failures if f.verdict != "wrong_answer"
    )


def test_a_peer_writing_a_ranks_output_through_a_shared_file_is_caught() -> None:
    problem = get_distributed_problem("all-gather")
    run = run_distributed(problem, EXAMPLES / "all_gather_peer_writes.py", 2, "float32", cases=[0], samples=SAMPLES)
    assert not run.rank_errors, run.rank_errors
    assert not run.passed and run.verdict == "integrity"
    assert {f.rank for f in run.failures} == {0}
    swaps = [f for f in run.failures if f.verdict == "integrity"]
    assert {f.sample for f in swaps} == {0, 1, 2}
    assert all("replaced the output's storage" in f.message for f in swaps)
    # The buffer the harness gave was never written: what the peer put in the shared file does not count.
    assert {f.sample for f in run.failures if f.verdict == "wrong_answer"} == {0, 1, 2}


@pytest.mark.parametrize("world_size", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_result_cached_across_samples_fails_from_the_second_sample(world_size: int) -> None:
    problem = get_distributed_problem("all-reduce")
    run = run_distributed(problem, EXAMPLES / "all_reduce_cached.py", world_size, "float32", cases=[0], samples=SAMPLES)
    assert not run.rank_errors, run.rank_errors
    assert not run.passed and run.verdict == "wrong_answer"
    # The first sample is right (the cache is filled honestly); every later one is wrong on every rank.
    assert {(f.rank, f.sample) for f in run.failures} == {(r, s) for r in range(world_size) for s in (1, 2)}


def test_the_late_write_check_compares_bytes_so_the_poison_equals_itself() -> None:
    import torch

    poisoned = torch.empty(6, dtype=torch.bfloat16)
    poisoned.view(torch.uint8).fill_(POISON_BYTE)  # a NaN pattern: no float compare finds it equal to itself
    assert changed_elements(poisoned, poisoned.clone()) == 0
    written = poisoned.clone()
    written[1:3] = 0.0
    assert changed_elements(poisoned, written) == 2
    assert changed_elements(poisoned, torch.zeros(3, dtype=torch.bfloat16)) == 6  # a reshaped buffer: all of it
