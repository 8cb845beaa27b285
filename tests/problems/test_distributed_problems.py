"""Every distributed problem's own checks: its reference runs for 2 and 4 ranks on the CPU, the expected outputs
match the declared shapes and pass their own verification, wrong outputs fail on the rank they are on, and the
byte arithmetic is nccl-tests'. The honest solutions run through the multi-rank harness in
tests/runner/test_distributed_harness.py."""

from __future__ import annotations

from functools import cache

import pytest
import torch

from problems.base import DType
from problems.catalog import CatalogError, describe, starter
from problems.distributed.base import DistributedProblem, RankTensors, bus_factor
from problems.distributed.builtin._collective import moe_splits
from problems.distributed.registry import distributed_problems, get_distributed_problem
from problems.inputs import torch_dtype
from problems.registry import UnknownProblemError, builtin_problems

SLUGS = list(distributed_problems())
WORLD_SIZES = (2, 4)
PROBLEM_DTYPES = [(slug, dtype) for slug, problem in distributed_problems().items() for dtype in problem.dtypes]
IDS = [f"{slug}-{dtype}" for slug, dtype in PROBLEM_DTYPES]
SEED = 20260301


@cache
def drawn(slug: str, dtype: DType, world_size: int, index: int, seed: int = SEED) -> tuple[RankTensors, RankTensors]:
    """Every rank's inputs for one case (one generator per rank, as the harness seeds them) and the expected outputs."""
    problem = get_distributed_problem(slug)
    case = problem.generate_test_cases(dtype, "cpu")[index]
    inputs = [
        problem.rank_inputs(case, rank, world_size, torch.Generator().manual_seed(seed + 7919 * rank))
        for rank in range(world_size)
    ]
    return inputs, problem.expected_outputs(case, inputs, world_size)


def cases(problem: DistributedProblem, dtype: DType) -> range:
    return range(len(problem.generate_test_cases(dtype, "cpu")))


def test_the_six_problems_are_listed_apart_from_the_single_gpu_library() -> None:
    assert set(SLUGS) == {
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "all-to-all-moe-dispatch",
        "all-gather-gemm",
        "gemm-reduce-scatter",
    }
    # The single-GPU registry, and so every single-GPU path, sees none of them.
    assert not set(SLUGS) & set(builtin_problems())
    with pytest.raises(UnknownProblemError, match="all-reduce"):
        get_distributed_problem("all-reduse")


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_reference_runs_and_its_outputs_pass_on_every_rank(slug: str, dtype: DType, world_size: int) -> None:
    problem = get_distributed_problem(slug)
    for index in cases(problem, dtype):
        case = problem.generate_test_cases(dtype, "cpu")[index]
        inputs, expected = drawn(slug, dtype, world_size, index)
        for rank in range(world_size):
            shapes = problem.rank_shapes(tuple(case["dims"]), rank, world_size)
            assert [tuple(t.shape) for t in inputs[rank]] == [shapes[p.name] for p in problem.input_params()]
            assert [tuple(t.shape) for t in expected[rank]] == problem.output_shapes(case, rank, world_size)
            for exp, element in zip(expected[rank], problem.output_elements(dtype), strict=True):
                rounded = exp.to(torch_dtype(element))
                passed, details = problem.verify_result(exp, rounded, dtype)
                assert passed, (case["name"], rank, details)


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_a_wrong_element_or_a_nan_fails_on_its_rank(slug: str, dtype: DType) -> None:
    problem = get_distributed_problem(slug)
    world_size = 4
    for index in cases(problem, dtype):
        _, expected = drawn(slug, dtype, world_size, index)
        for rank in range(world_size):
            exp = expected[rank][0]
            if exp.numel() == 0:
                continue
            right = exp.to(torch_dtype(problem.output_elements(dtype)[0]))
            flat = exp.numel() // 2
            bumped, nan = right.clone(), right.clone()
            bumped.reshape(-1)[flat] += 1.0 + 0.5 * float(exp.abs().max())
            nan.reshape(-1)[flat] = float("nan")
            for what, actual in {"one element off": bumped, "one NaN": nan}.items():
                assert not problem.verify_result(exp, actual, dtype)[0], (slug, index, rank, what)


@pytest.mark.parametrize("slug", SLUGS)
def test_inputs_are_fresh_per_seed_and_differ_between_ranks(slug: str) -> None:
    problem = get_distributed_problem(slug)
    dtype = problem.dtypes[0]
    index = len(problem.generate_test_cases(dtype, "cpu")) - 1
    first, _ = drawn(slug, dtype, 2, index)
    second, _ = drawn(slug, dtype, 2, index, SEED + 1)
    assert not torch.equal(first[0][0], second[0][0]), "the same inputs from two seeds"
    assert not torch.equal(first[0][0], first[1][0]), "two ranks drew the same inputs"


@pytest.mark.parametrize("slug", SLUGS)
def test_metadata_cases_and_signatures(slug: str) -> None:
    problem = get_distributed_problem(slug)
    names = [p.name for p in problem.parameters]
    assert len(set(names)) == len(names)
    assert {2, 4, 8} <= set(problem.world_sizes)
    assert problem.flops_formula and problem.bytes_formula and problem.link_assumption
    assert "world_size" in problem.description and "slowest rank" in problem.description
    assert "ncclComm_t comm" in problem.cuda_signature() and "peer_buffers" in problem.cuda_signature()
    tail = "rank: int, world_size: int, group: torch.distributed.ProcessGroup) -> None:"
    assert problem.python_signature().endswith(tail)
    extras = [p for p in problem.parameters if p.is_extra]
    for dtype in problem.dtypes:
        for device_kind in ("cpu", "gpu"):
            listed = problem.generate_test_cases(dtype, device_kind)
            assert len({c["name"] for c in listed}) == len(listed)
            for world_size in problem.world_sizes:
                sizes = [problem.get_bytes(c, dtype, world_size) for c in listed]
                assert sizes == sorted(sizes) and min(sizes) > 0, (device_kind, world_size, sizes)
                for case in listed:
                    assert len(problem.get_extra_params(case, 0, world_size)) == len(extras)
                    floor = problem.floor_bytes(tuple(case["dims"]), dtype, world_size)
                    assert floor > 0
                    # Uneven splits can load one rank beyond the average the bus bytes count; the others cannot.
                    if problem.collective != "all-to-all":
                        assert floor <= problem.bus_bytes(case, dtype, world_size), case["name"]
                    if problem.score_metric == "gflops":
                        assert problem.get_flops(case, world_size) > 0
        gpu = problem.generate_test_cases(dtype, "gpu")
        assert any(any(d > 1 and d % 32 for d in c["dims"]) for c in gpu), "no ragged GPU case"
        assert max(problem.get_bytes(c, dtype, 2) for c in gpu) >= 1 << 20, "the largest GPU case is too small"


@pytest.mark.parametrize("slug", SLUGS)
def test_the_catalogue_describes_it_under_its_category_with_its_ranks_and_signatures(slug: str) -> None:
    # What /problem, /problems and the web's library read (`problems.catalog.describe` of a built-in, source None).
    problem = get_distributed_problem(slug)
    info = describe(slug, None)
    assert (info.slug, info.title, info.builtin) == (slug, problem.title, True)
    assert info.category == "distributed" and info.world_sizes == problem.world_sizes and info.distributed
    assert info.c_signature == problem.cuda_signature(problem.dtypes[0])
    assert info.python_signature == problem.python_signature().rstrip(":")
    assert info.checked and info.score_metric == problem.score_metric
    cpu = problem.generate_test_cases(problem.dtypes[0], "cpu")
    assert len(info.cpu_cases) == len(cpu) * len(problem.world_sizes)
    assert info.cpu_cases[0].name == f"{cpu[0]['name']} · {problem.world_sizes[0]} ranks"
    assert all(c.shapes.startswith(("each rank: ", "rank 0: ")) for c in info.gpu_cases)
    name, text = starter(slug, None, "python", "float32")
    assert name == f"{slug.replace('-', '_')}.py" and problem.python_signature() in text
    with pytest.raises(CatalogError, match="Python only"):
        starter(slug, None, "cuda", "float32")


def test_bus_factors_and_bandwidths_are_nccl_tests() -> None:
    assert bus_factor("all-reduce", 8) == pytest.approx(2 * 7 / 8)
    for collective in ("all-gather", "reduce-scatter", "all-to-all"):
        assert bus_factor(collective, 4) == pytest.approx(3 / 4)  # type: ignore[arg-type]
    problem = get_distributed_problem("all-reduce")
    case = problem.generate_test_cases("float32", "gpu")[1]  # 2^24 elements: S = 64 MiB
    algbw = problem.algorithm_bandwidth(case, "float32", 8, 1e-3)
    assert algbw == pytest.approx((1 << 26) / 1e-3)
    assert problem.bus_bandwidth(case, "float32", 8, 1e-3) == pytest.approx(algbw * 1.75)
    # The floor over 450 GB/s links: 7/8 of 64 MiB at that rate.
    assert problem.floor_seconds(case, "float32", 8, 450e9) == pytest.approx((1 << 26) * 7 / 8 / 450e9)


@pytest.mark.parametrize("world_size", (2, 3, 4, 8))
def test_moe_splits_are_uneven_and_sum_to_the_tokens(world_size: int) -> None:
    splits = moe_splits(257, world_size, f"test:{world_size}")
    assert all(sum(row) == 257 and min(row) >= 0 for row in splits)
    assert len({tuple(row) for row in splits}) > 1 and len({v for row in splits for v in row}) > world_size
    if world_size > 2:
        assert all(0 in row for row in splits)
    problem = get_distributed_problem("all-to-all-moe-dispatch")
    case = problem.generate_test_cases("float32", "cpu")[-1]
    dims = tuple(case["dims"])
    if world_size not in problem.world_sizes:
        return
    for rank in range(world_size):
        send, recv, tokens, recv_tokens, _ = problem.rank_extras(dims, rank, world_size)
        assert sum(send) == tokens and sum(recv) == recv_tokens
