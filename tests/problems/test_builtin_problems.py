"""Every built-in problem, on its CPU test cases: the reference verifies, wrong outputs fail, metadata adds up,
inputs are fresh and signed, cases run small to large, and an honest PyTorch solution in the dtype passes."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from problems.inputs import torch_dtype
from problems.registry import builtin_problems, get_problem

if TYPE_CHECKING:
    # Imported for annotations only: pytest would try to collect a class named TestCase.
    from problems.base import DType, Problem, TestCase

NEW_PROBLEMS = (
    "relu",
    "leaky_relu",
    "matrix_vector",
    "transpose",
    "reduction_sum",
    "softmax",
    "layernorm",
    "conv2d",
    "gemm_relu",
    "prefix_sum",
)
PROBLEM_DTYPES = [(slug, dtype) for slug, problem in builtin_problems().items() for dtype in problem.dtypes]
IDS = [f"{slug}-{dtype}" for slug, dtype in PROBLEM_DTYPES]
SEED = 20240601


# -- honest solutions: plain PyTorch in the dtype they are given, written the way a competitor would ----------------


def _vector_add(a, b, c, n):
    torch.add(a, b, out=c)


def _matmul(a, b, c, m, k, n):
    torch.matmul(a, b, out=c)


def _relu(x, y, n):
    y.copy_(torch.relu(x))


def _leaky_relu(x, y, n, alpha):
    y.copy_(F.leaky_relu(x, alpha))


def _matrix_vector(a, x, y, m, n):
    torch.mv(a, x, out=y)


def _transpose(a, b, rows, cols):
    b.copy_(a.t())


def _reduction_sum(x, out, n):
    out.copy_(x.sum().reshape(1))


def _softmax(x, y, rows, cols):
    y.copy_(torch.softmax(x, dim=-1))


def _layernorm(x, gamma, beta, y, rows, cols, eps):
    y.copy_(F.layer_norm(x, (cols,), gamma, beta, eps))


def _conv2d(x, weight, y, n, c_in, h, w, c_out, kh, kw):
    y.copy_(F.conv2d(x, weight, padding=(kh // 2, kw // 2)))


def _gemm_relu(a, b, c, m, k, n):
    c.copy_(torch.relu(a @ b))


def _prefix_sum(x, y, n):
    torch.cumsum(x, dim=0, out=y)


HONEST: dict[str, Callable[..., None]] = {
    "vector_add": _vector_add,
    "matmul": _matmul,
    "relu": _relu,
    "leaky_relu": _leaky_relu,
    "matrix_vector": _matrix_vector,
    "transpose": _transpose,
    "reduction_sum": _reduction_sum,
    "softmax": _softmax,
    "layernorm": _layernorm,
    "conv2d": _conv2d,
    "gemm_relu": _gemm_relu,
    "prefix_sum": _prefix_sum,
}


# -- helpers --------------------------------------------------------------------------------------------------------


@cache
def cpu_cases(slug: str, dtype: DType) -> list[TestCase]:
    return get_problem(slug).generate_test_cases(dtype, "cpu")


@cache
def case_data(
    slug: str, dtype: DType, index: int
) -> tuple[TestCase, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """The case, its inputs (from a seeded generator) and the reference outputs, as the harness makes them."""
    case = cpu_cases(slug, dtype)[index]
    gen = torch.Generator().manual_seed(SEED + index)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](gen))
    return case, inputs, get_problem(slug).reference_outputs(inputs)


def all_case_data(slug: str, dtype: DType):
    return [case_data(slug, dtype, i) for i in range(len(cpu_cases(slug, dtype)))]


def out_dtype(problem: Problem, dtype: DType) -> torch.dtype:
    return torch_dtype(problem.output_dtype(dtype))


def tolerance_bound(problem: Problem, dtype: DType, expected: torch.Tensor) -> torch.Tensor:
    """The elementwise bound that verification applies: atol * rms(expected) + rtol * |expected|."""
    tol = problem.tolerances[dtype]
    rms = float(expected.square().mean().sqrt()) or 1.0
    return tol.atol * rms + tol.rtol * expected.abs()


def like_first_input(first: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """The first input, truncated or zero-padded to the output's element count and shaped like it."""
    flat = first.double().reshape(-1)[: expected.numel()]
    if flat.numel() < expected.numel():
        flat = torch.cat([flat, flat.new_zeros(expected.numel() - flat.numel())])
    return flat.reshape(expected.shape)


# -- tests ----------------------------------------------------------------------------------------------------------


def test_the_new_problems_are_registered() -> None:
    assert set(NEW_PROBLEMS) <= set(builtin_problems())


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_reference_rounded_to_the_dtype_passes(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, _, expected in all_case_data(slug, dtype):
        for exp in expected:
            actual = exp.to(out_dtype(problem, dtype))
            passed, details = problem.verify_result(exp, actual, dtype)
            assert passed, (case["name"], details)


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_wrong_outputs_fail(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    odt = out_dtype(problem, dtype)
    for case, inputs, expected in all_case_data(slug, dtype):
        exp = expected[0]
        wrong: dict[str, torch.Tensor] = {
            "zeros": torch.zeros(exp.shape, dtype=odt),
            "first input": like_first_input(inputs[0], exp).to(odt),
            "all NaN": torch.full(exp.shape, float("nan"), dtype=odt),
        }
        flat_index = exp.numel() // 2
        bumped = exp.to(odt).double().reshape(-1).clone()
        bound = tolerance_bound(problem, dtype, exp).reshape(-1)
        bumped[flat_index] = exp.reshape(-1)[flat_index] + 20 * bound[flat_index]
        wrong["one element off by 20x the tolerance"] = bumped.reshape(exp.shape).to(odt)
        one_nan = exp.to(odt).clone()
        one_nan.reshape(-1)[flat_index] = float("nan")
        wrong["one NaN"] = one_nan
        for what, actual in wrong.items():
            passed, _ = problem.verify_result(exp, actual, dtype)
            assert not passed, f"{case['name']}: {what} passed"


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_honest_solution_in_the_dtype_passes(slug: str, dtype: DType) -> None:
    if slug not in HONEST:
        pytest.skip(f"no honest PyTorch solution for {slug} in this file yet")
    problem = get_problem(slug)
    for case, inputs, expected in all_case_data(slug, dtype):
        outputs = tuple(torch.full(e.shape, float("nan"), dtype=out_dtype(problem, dtype)) for e in expected)
        HONEST[slug](*inputs, *outputs, *problem.get_extra_params(case))
        for exp, actual in zip(expected, outputs, strict=True):
            passed, details = problem.verify_result(exp, actual, dtype)
            assert passed, (case["name"], details)
            # Comfortably: the honest error stays well inside the bound, so a fresh seed will not tip it over.
            ratio = float(((actual.double() - exp).abs() / tolerance_bound(problem, dtype, exp)).max())
            assert ratio < 0.5, (case["name"], ratio)


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_metadata_matches_the_signature(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    params = problem.parameters
    roles = [p.role for p in params]
    assert roles == sorted(roles, key=["input", "output", "scalar"].index), "inputs, then outputs, then scalars"
    assert len(problem.get_function_signature(dtype)["argtypes"]) == len(params)
    scalars = [p for p in params if p.role == "scalar"]
    for case in cpu_cases(slug, dtype) + problem.generate_test_cases(dtype, "gpu"):
        extras = problem.get_extra_params(case)
        assert len(extras) == len(scalars), case["name"]
        for value, param in zip(extras, scalars, strict=True):
            assert isinstance(value, float if param.scalar_type == "float" else int), (case["name"], param.name)
        assert problem.get_bytes(case, dtype) > 0
        if slug == "transpose":
            assert problem.get_flops(case) == 0
        else:
            assert problem.get_flops(case) > 0, case["name"]
    assert problem.score_metric == ("gbps" if slug == "transpose" else "gflops")
    assert problem.flops_formula and problem.bytes_formula


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_outputs_match_the_output_parameters(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, _, expected in all_case_data(slug, dtype):
        assert len(expected) == problem.output_count(), case["name"]
        for exp in expected:
            assert exp.dtype == torch.float64, case["name"]


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_inputs_are_signed_and_fresh(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, inputs, _ in all_case_data(slug, dtype):
        assert len(inputs) == sum(1 for p in problem.parameters if p.role == "input"), case["name"]
        for tensor in inputs:
            assert tensor.dtype == torch_dtype(dtype)
            assert bool((tensor > 0).any()) and bool((tensor < 0).any()), f"{case['name']}: inputs need both signs"
        other = case["create_inputs"](torch.Generator().manual_seed(SEED + 1000))
        assert any(not torch.equal(a, b) for a, b in zip(inputs, other, strict=True)), case["name"]


@pytest.mark.parametrize("slug", list(builtin_problems()))
def test_cases_run_small_to_large(slug: str) -> None:
    problem = get_problem(slug)
    for dtype in problem.dtypes:
        for device_kind in ("gpu", "cpu"):
            cases = problem.generate_test_cases(dtype, device_kind)
            if device_kind == "gpu":
                assert 3 <= len(cases) <= 6
            names = [c["name"] for c in cases]
            assert len(set(names)) == len(names), names
            assert all(c.get("dtype", dtype) == dtype for c in cases)
            flops = [problem.get_flops(c) for c in cases]
            sizes = [problem.get_bytes(c, dtype) for c in cases]
            assert flops == sorted(flops) or sizes == sorted(sizes), (device_kind, names)
        gpu_work = max(problem.get_bytes(c, dtype) for c in problem.generate_test_cases(dtype, "gpu"))
        cpu_work = max(problem.get_bytes(c, dtype) for c in problem.generate_test_cases(dtype, "cpu"))
        assert cpu_work < gpu_work
