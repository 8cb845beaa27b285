"""The implausible-time floor counts only work no correct solution avoids: every problem declares which bounds hold,
a cleverer algorithm than the FLOP formula's is never rejected, and impossible times still are."""

from __future__ import annotations

import math

import pytest

from problems.base import ELEMENT_BYTES, FLOOR_KINDS, Problem, TestCase, TimeFloor
from problems.registry import builtin_problems
from runner.gpus import PhysicalFloor, implausible_time, physical_floor, spec_for
from runner.judge.floor_work import unavoidable_work

H100 = spec_for("NVIDIA H100 80GB HBM3")
H100_L2_BYTES = 50 * 1024 * 1024

# Every problem whose floor counts FLOPs, with the reason its formula is a lower bound for any algorithm. A problem
# joins only after review: for a product, a convolution or anything matmul-like, some algorithm (Strassen, an FFT
# or NTT, Winograd) always does less arithmetic than the formula counts.
REVIEWED_FLOP_FLOORS: dict[str, str] = {
    "vector-addition": "n outputs, each the sum of two inputs that no other output reads: n adds at the least",
}
# Every problem whose floor counts only a share of its inputs, and why a correct solution may skip the rest.
REVIEWED_PARTIAL_READS: dict[str, float] = {
    "lower-trig-matmul": 0.5,  # the zeros above the diagonal
    "upper-trig-matmul": 0.5,  # the zeros below the diagonal
    "symmetric-matmul": 0.5,  # one half of each operand gives the other
    "min-spanning-tree": 0.5,  # one half of the symmetric matrix gives the other
    "avg-pool-1d": 0.0,  # a stride past the window skips inputs (1048576, 2, 3, 1 reads two thirds)
    "avg-pool-2d": 0.0,
    "avg-pool-3d": 0.0,
    "max-pool-1d": 0.0,
    "max-pool-2d": 0.0,  # (2047, 3001, 3, 2, 1, 2): dilation 2, stride 2 reads one element in four
    "max-pool-3d": 0.0,
}
# Words in a statement that promise structure a solution may exploit to read less.
STRUCTURE_WORDS = ("symmetric", "triangular")

PROBLEMS = builtin_problems()


def _output_bytes(problem: Problem, case: TestCase) -> int:
    shapes = problem.buffer_shapes(case)
    assert shapes is not None, f"{problem.slug} states no buffer shapes"
    outputs = [p for p in problem.parameters if p.role == "output"]
    elements = problem.output_elements(problem.dtypes[0])
    return sum(math.prod(shapes[p.name]) * ELEMENT_BYTES[e] for p, e in zip(outputs, elements, strict=True))


def _floor(problem: Problem, case: TestCase, *, flushed: bool = True) -> PhysicalFloor:
    work = unavoidable_work(
        problem.time_floor,
        flops=problem.get_flops(case),
        counted_bytes=problem.get_bytes(case, problem.dtypes[0]),
        output_bytes=_output_bytes(problem, case),
        l2_bytes=H100_L2_BYTES,
        l2_flushed=flushed,
    )
    floor = physical_floor(work.flops, work.dram_bytes, problem.dtypes[0], H100, None)
    assert floor is not None
    return floor


def _case(slug: str, name: str) -> tuple[Problem, TestCase]:
    problem = PROBLEMS[slug]
    case = next(c for c in problem.generate_test_cases(problem.dtypes[0], "gpu") if c["name"] == name)
    return problem, case


def test_every_problem_declares_a_floor_within_the_rules() -> None:
    flop_floors = set()
    partial_reads = {}
    for slug, problem in PROBLEMS.items():
        floor = problem.time_floor
        assert isinstance(floor, TimeFloor), slug
        assert floor.kind in FLOOR_KINDS, slug
        if floor.counts_flops:
            flop_floors.add(slug)
        if floor.read_share < 1.0:
            partial_reads[slug] = floor.read_share
    assert flop_floors == set(REVIEWED_FLOP_FLOORS), "a FLOP floor needs review: add it to REVIEWED_FLOP_FLOORS"
    assert partial_reads == REVIEWED_PARTIAL_READS


def test_no_matmul_like_problem_counts_flops() -> None:
    # Products, convolutions, attention and polynomial products all admit algorithms below their formula.
    families = ("matmul", "conv", "attention", "crypto", "convolution", "polynomial")
    for slug, problem in PROBLEMS.items():
        if any(tag in families for tag in problem.tags) or "matmul" in slug or "gemm" in slug:
            assert not problem.time_floor.counts_flops, slug


def test_statements_that_promise_structure_floor_only_what_must_be_read() -> None:
    for slug, problem in PROBLEMS.items():
        text = problem.description.lower()
        if any(word in text for word in STRUCTURE_WORDS):
            assert problem.time_floor.read_share <= 0.5, slug
        if "pooling" in problem.tags:
            assert problem.time_floor.read_share == 0.0, slug


def test_a_floor_that_counts_flops_or_skips_inputs_must_say_why() -> None:
    with pytest.raises(ValueError, match="why"):
        TimeFloor("bytes-and-flops")
    with pytest.raises(ValueError, match="why"):
        TimeFloor(read_share=0.5)
    with pytest.raises(ValueError, match="share"):
        TimeFloor(read_share=1.5, why="x")
    with pytest.raises(ValueError, match="kind"):
        TimeFloor("flops", why="x")  # type: ignore[arg-type]


def test_an_ntt_faster_than_the_quadratic_formula_is_not_rejected() -> None:
    # poly-multiply-ff at n = 10^5: 2·10^10 FLOPs at 1.25x the TF32 ceiling would be a 32 µs floor, which an NTT
    # (O(n log n) work) can beat. The floor counts 1.6 MB of traffic instead: well under a microsecond.
    problem, case = _case("poly-multiply-ff", "n=100000")
    quadratic = physical_floor(problem.get_flops(case), 0, "float32", H100, None)
    assert quadratic is not None and quadratic.seconds > 30e-6
    assert _floor(problem, case).seconds < 1e-6
    work = unavoidable_work(
        problem.time_floor,
        flops=problem.get_flops(case),
        counted_bytes=problem.get_bytes(case, "float32"),
        output_bytes=_output_bytes(problem, case),
        l2_bytes=H100_L2_BYTES,
        l2_flushed=True,
    )
    assert work.flops is None and "not a bound" in work.describe()
    # An NTT of 10 µs passes.
    assert implausible_time(10e-6, _floor(problem, case)) is None


def test_a_large_matmul_is_floored_by_its_traffic_not_its_formula() -> None:
    problem = PROBLEMS["matrix-multiplication"]
    case = max(problem.generate_test_cases("float32", "gpu"), key=problem.get_flops)
    by_formula = physical_floor(problem.get_flops(case), 0, "float32", H100, None)
    assert by_formula is not None and _floor(problem, case).seconds < by_formula.seconds / 2


def test_outputs_an_l2_can_hold_do_not_count_and_the_rest_do() -> None:
    floor = TimeFloor()
    # A copy of 32 MiB: the output fits in a 50 MiB L2 and may still be dirty there at the stop event.
    small = unavoidable_work(
        floor, flops=0, counted_bytes=64 << 20, output_bytes=32 << 20, l2_bytes=50 << 20, l2_flushed=True
    )
    assert small.dram_bytes == 32 << 20
    # Of a 256 MiB output, all but one L2 must have been written back inside the window.
    large = unavoidable_work(
        floor, flops=0, counted_bytes=512 << 20, output_bytes=256 << 20, l2_bytes=50 << 20, l2_flushed=True
    )
    assert large.dram_bytes == (256 << 20) + (256 - 50 << 20)


def test_without_a_flush_one_l2_of_inputs_may_be_cached() -> None:
    floor = TimeFloor()
    flushed = unavoidable_work(
        floor, flops=0, counted_bytes=40 << 20, output_bytes=10 << 20, l2_bytes=50 << 20, l2_flushed=True
    )
    warm = unavoidable_work(
        floor, flops=0, counted_bytes=40 << 20, output_bytes=10 << 20, l2_bytes=50 << 20, l2_flushed=False
    )
    assert flushed.dram_bytes == 30 << 20
    assert warm.dram_bytes == 0
    big_warm = unavoidable_work(
        floor, flops=0, counted_bytes=300 << 20, output_bytes=100 << 20, l2_bytes=50 << 20, l2_flushed=False
    )
    assert big_warm.dram_bytes == (150 << 20) + (50 << 20)


def test_a_partial_read_share_scales_only_the_inputs() -> None:
    half = TimeFloor(read_share=0.5, why="symmetric")
    work = unavoidable_work(
        half, flops=10, counted_bytes=300 << 20, output_bytes=100 << 20, l2_bytes=50 << 20, l2_flushed=True
    )
    assert work.dram_bytes == (100 << 20) + (50 << 20)
    assert work.flops is None


def test_a_reviewed_flop_floor_keeps_its_flops() -> None:
    problem, case = _case("vector-addition", "n=1000003")
    work = unavoidable_work(
        problem.time_floor,
        flops=problem.get_flops(case),
        counted_bytes=problem.get_bytes(case, "float32"),
        output_bytes=_output_bytes(problem, case),
        l2_bytes=H100_L2_BYTES,
        l2_flushed=True,
    )
    assert work.flops == problem.get_flops(case)


@pytest.mark.parametrize("slug", sorted(PROBLEMS))
def test_every_gpu_case_floor_is_at_most_the_formula_traffic(slug: str) -> None:
    # The floor never exceeds what the problem's own byte count gives at the same rate: it only removes work.
    problem = PROBLEMS[slug]
    for case in problem.generate_test_cases(problem.dtypes[0], "gpu"):
        counted = physical_floor(None, problem.get_bytes(case, problem.dtypes[0]), problem.dtypes[0], H100, None)
        assert counted is not None
        if problem.time_floor.counts_flops:
            continue
        assert _floor(problem, case).seconds <= counted.seconds


def test_impossible_times_are_still_rejected() -> None:
    # A 2^26 + 17 vector add reads 537 MB from DRAM after the flush: over 100 µs at 1.25x an H100's bandwidth.
    problem, case = _case("vector-addition", f"n={(1 << 26) + 17}")
    floor = _floor(problem, case)
    assert floor.seconds > 100e-6
    reason = implausible_time(floor.seconds * 0.5, floor)
    assert reason is not None and "physical floor" in reason and "GB/s" in reason
    assert implausible_time(floor.seconds * 1.01, floor) is None
    for bad in (0.0, -1e-6, float("nan"), float("inf")):
        assert "not a positive finite number" in (implausible_time(bad, floor) or "")


def test_arena_show_states_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.cli import main

    assert main(["show", "poly-multiply-ff"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Time floor:"))
    assert line.startswith("Time floor: bytes:") and "not the FLOPs" in line
    assert main(["show", "vector-addition"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Time floor:"))
    assert line.startswith("Time floor: bytes-and-flops:") and "n adds" in line
