"""The CPU multi-rank harness: honest solutions of the six distributed problems pass at 2 and 4 gloo ranks, a
wrong rank is named, a slow rank sets the score, a rank that raises is reported, and the side that loads the
submission reaches nothing of the judge's."""

from __future__ import annotations

from pathlib import Path

import pytest

from problems.distributed.registry import distributed_problems, get_distributed_problem
from runner.distributed.harness import run_distributed
from tests.import_graph import import_closure

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "distributed"
SLUGS = list(distributed_problems())
# Two samples after one warm-up keep a run near two seconds on a busy 2-core host; the spawn and torch's import
# in each rank are most of it.
SAMPLES = 2


def example(name: str) -> Path:
    return EXAMPLES / f"{name.replace('-', '_')}.py"


@pytest.mark.parametrize("world_size", [2, pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("slug", SLUGS)
def test_the_honest_solution_passes_on_every_rank(slug: str, world_size: int) -> None:
    problem = get_distributed_problem(slug)
    run = run_distributed(problem, example(slug), world_size, "float32", samples=SAMPLES)
    assert not run.rank_errors, run.rank_errors
    assert run.passed, [f"{f.case} rank {f.rank}: {f.message}" for f in run.failures]
    assert [c.name for c in run.cases] == [c["name"] for c in problem.generate_test_cases("float32", "cpu")]
    for case in run.cases:
        assert len(case.rank_seconds) == world_size
        assert all(len(times) == SAMPLES and min(times) > 0 for times in case.rank_seconds)


@pytest.mark.slow
def test_a_bfloat16_sum_over_four_ranks_passes_its_tolerance() -> None:
    # gloo sums in bfloat16 itself: the reduction's bound must admit a real collective's rounding.
    run = run_distributed(get_distributed_problem("all-reduce"), example("all-reduce"), 4, "bfloat16", samples=1)
    assert run.passed, (run.rank_errors, [f.message for f in run.failures])


@pytest.mark.parametrize("world_size", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_wrong_rank_fails_verification_on_that_rank_alone(world_size: int) -> None:
    problem = get_distributed_problem("all-reduce")
    run = run_distributed(problem, EXAMPLES / "all_reduce_wrong_rank.py", world_size, "float32", samples=1)
    assert not run.rank_errors and not run.passed
    assert {f.rank for f in run.failures} == {world_size - 1}
    # Every case and every sample (the warm-up too) of that rank is checked and caught.
    assert {(f.case, f.sample) for f in run.failures} == {(c.name, s) for c in run.cases for s in range(2)}
    assert all(f.output == "d_output" and "elements differ" in f.message for f in run.failures)


def test_the_slowest_rank_sets_each_samples_time() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("uneven", EXAMPLES / "all_reduce_uneven_rank.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    extra: float = module.EXTRA_SECONDS
    problem = get_distributed_problem("all-reduce")
    run = run_distributed(problem, EXAMPLES / "all_reduce_uneven_rank.py", 2, "float32", cases=[0], samples=SAMPLES)
    assert run.passed, (run.rank_errors, run.failures)
    (case,) = run.cases
    # Rank 1 sleeps after the collective, so rank 0's own clock stops earlier: the score is rank 1's.
    assert all(t >= extra for t in case.rank_seconds[1])
    assert case.sample_seconds == [max(a, b) for a, b in zip(*case.rank_seconds, strict=True)]
    assert case.slowest_ranks == [1] * SAMPLES
    assert case.seconds >= extra


def test_a_rank_that_raises_is_reported_by_rank(tmp_path: Path) -> None:
    solution = tmp_path / "raises.py"
    solution.write_text(
        "import torch.distributed as dist\n\n\n"
        "def solution(d_input, d_output, n, rank, world_size, group):\n"
        "    if rank == 1:\n"
        "        raise RuntimeError('rank one gives up')\n"
        "    d_output.copy_(d_input)\n",
        encoding="utf-8",
    )
    run = run_distributed(get_distributed_problem("all-reduce"), solution, 2, "float32", cases=[0], samples=1)
    assert not run.passed
    assert set(run.first_errors) == {1} and "rank one gives up" in run.first_errors[1]
    # Rank 0 waited for rank 1 at the next release, and says that a peer stopped rather than blaming itself.
    assert all("a peer rank stopped" in e for r, e in run.rank_errors.items() if r != 1)


def test_the_rank_side_reaches_nothing_of_the_judge() -> None:
    reached = import_closure("runner.distributed.rank")
    judged = {"runner.distributed.harness", "problems.verification"}
    judged |= {m for m in reached if m.startswith("runner.judge")}
    assert not reached & judged, sorted(reached & judged)
    # The walk does see the harness reach verification, so the check above can fail.
    assert "problems.verification" in import_closure("runner.distributed.harness")


def test_one_rank_runs_as_the_single_device_check_released_by_the_host() -> None:
    run = run_distributed(get_distributed_problem("all-reduce"), example("all-reduce"), 1, "float32", samples=2)
    assert run.passed, (run.rank_errors, run.failures)
    assert {case.release for case in run.cases} == {"host barrier"}


def test_a_cuda_solution_is_refused_on_cpu_ranks() -> None:
    with pytest.raises(ValueError, match="only on GPU ranks"):
        run_distributed(get_distributed_problem("all-reduce"), EXAMPLES / "all_reduce_nccl.cu", 2, "float32")
