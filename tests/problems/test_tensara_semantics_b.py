"""Tensara's semantics for the pooling, graph, scan, sort, crypto and quantization problems: the encodings and
constants its statements fixed, and tolerances that accept at least what its checks accepted
(docs/tensara-semantics.md lists what was compared)."""

from __future__ import annotations

import pytest
import torch

from problems.registry import get_problem
from tests.problems.selfcheck import SOLUTIONS_DIR, check_solution, python_call


def test_ecc_point_negation_uses_tensaras_fixed_prime() -> None:
    problem = get_problem("ecc-point-negation")
    assert problem.version == 2
    for case in problem.generate_test_cases("float32", "cpu"):
        p, _n = problem.get_extra_params(case)
        assert p == (1 << 61) - 1, case["name"]
        xs, ys = case["create_inputs"](torch.Generator().manual_seed(5))
        assert int(xs.view(torch.int64).max()) < p and int(ys.view(torch.int64).max()) < p


def test_an_ecc_kernel_with_the_prime_built_in_passes() -> None:
    # Written as a Tensara competitor would: the statement's p = 2^61 - 1 as a constant, the argument unused.
    problem = get_problem("ecc-point-negation")
    built_in = python_call(SOLUTIONS_DIR / "crypto" / "ecc_point_negation.py")
    result = check_solution(problem, built_in, "float32", "cpu")
    assert result.cases and all(c.passed for c in result.cases), [c.message for c in result.cases]


def test_shortest_path_writes_minus_one_where_unreachable() -> None:
    problem = get_problem("shortest-path")
    assert problem.version == 2
    for case in problem.generate_test_cases("float32", "cpu"):
        inputs = case["create_inputs"](torch.Generator().manual_seed(11))
        extras = problem.get_extra_params(case)
        (dist,) = problem.reference_outputs(inputs, extras)
        assert (dist == -1).any(), f"{case['name']}: every vertex is reachable"
        assert not dist.isinf().any()
        assert dist[extras[0]] == 0


def test_a_shortest_path_kernel_that_leaves_infinity_fails() -> None:
    problem = get_problem("shortest-path")
    case = problem.generate_test_cases("float32", "cpu")[0]
    inputs = case["create_inputs"](torch.Generator().manual_seed(3))
    (expected,) = problem.reference_outputs(inputs, problem.get_extra_params(case))
    with_inf = torch.where(expected == -1, float("inf"), expected)
    assert not problem.verify_result(expected, with_inf, "float32")[0]


@pytest.mark.parametrize(
    ("slug", "accepted"),
    [
        # Tensara's relative bound on each, as a relative error it must accept here too.
        ("avg-pool-1d", 5e-3),
        ("avg-pool-3d", 2e-4),
        ("max-pool-1d", 3e-4),
        ("max-pool-2d", 1e-5),
        ("max-pool-3d", 1e-4),
        ("cumprod", 1e-3),
        ("all-pairs-shortest-path", 1e-4),
        ("shortest-path", 1e-4),
        ("min-spanning-tree", 1e-4),
    ],
)
def test_the_check_accepts_tensaras_relative_error_and_rejects_zeros(slug: str, accepted: float) -> None:
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[-1]
    inputs = case["create_inputs"](torch.Generator().manual_seed(2))
    (expected,) = problem.reference_outputs(inputs, problem.get_extra_params(case))
    # Just inside Tensara's bound, every element off in the same direction.
    assert problem.verify_result(expected, expected * (1 + 0.99 * accepted), "float32")[0]
    assert not problem.verify_result(expected, torch.zeros_like(expected), "float32")[0]
    assert not problem.verify_result(expected, expected * (1 + 0.05), "float32")[0]
