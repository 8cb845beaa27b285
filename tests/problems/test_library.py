"""Every built-in problem, proven: its own checks hold, and the library's honest solutions pass while the
deliberately broken ones fail.

Each problem has four files under `tests/problems/solutions/<family>/`: `<slug>.py` (PyTorch or Triton),
`<slug>.cu`, and a `_broken` twin of each with a realistic bug. A missing file fails; nothing skips. The
Python files run here on the CPU cases in every dtype; the CUDA files run on a GPU (`scripts/gpu-check.sh`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

from problems.inputs import torch_dtype
from problems.registry import builtin_aliases, builtin_problems, get_problem
from tests.problems.selfcheck import case_inputs, check_solution, cuda_call, python_call, solution_path

if TYPE_CHECKING:
    # Imported for annotations only: pytest would try to collect a class named TestCase.
    from problems.base import DType, Problem, TestCase

SLUGS = list(builtin_problems())
PROBLEM_DTYPES = [(slug, dtype) for slug, problem in builtin_problems().items() for dtype in problem.dtypes]
IDS = [f"{slug}-{dtype}" for slug, dtype in PROBLEM_DTYPES]
SEED = 20240601
Tensors = tuple[torch.Tensor, ...]
# Tensara's interface (../shared/tensara-abi.md) has these 83 slugs; each must be here under its own name.
TENSARA_SLUGS = (Path(__file__).parent / "tensara_slugs.txt").read_text().split()


@cache
def cpu_cases(slug: str, dtype: DType) -> list[TestCase]:
    return get_problem(slug).generate_test_cases(dtype, "cpu")


@cache
def case_data(slug: str, dtype: DType, index: int) -> tuple[TestCase, Tensors, Tensors]:
    case = cpu_cases(slug, dtype)[index]
    inputs, _, expected = case_inputs(get_problem(slug), case, "cpu", SEED + index)
    return case, inputs, expected


def all_case_data(slug: str, dtype: DType) -> list[tuple[TestCase, Tensors, Tensors]]:
    return [case_data(slug, dtype, i) for i in range(len(cpu_cases(slug, dtype)))]


def tolerance_bound(problem: Problem, dtype: DType, expected: torch.Tensor) -> torch.Tensor:
    tol = problem.tolerances[dtype]
    exp = expected.double()
    rms = float(exp.square().mean().sqrt()) or 1.0
    return tol.atol * rms + tol.rtol * exp.abs()


def is_exact(problem: Problem, dtype: DType) -> bool:
    return all(not torch_dtype(e).is_floating_point for e in problem.output_elements(dtype))


# -- the catalogue ----------------------------------------------------------------------------------------------


def test_the_library_has_at_least_100_problems_and_every_tensara_slug() -> None:
    assert len(TENSARA_SLUGS) == 83
    missing = sorted(set(TENSARA_SLUGS) - set(SLUGS))
    assert not missing, f"Tensara slugs with no problem: {missing}"
    assert len(SLUGS) >= 100, len(SLUGS)


def test_former_slugs_name_their_problems() -> None:
    aliases = builtin_aliases()
    assert aliases["matmul"] == "matrix-multiplication"
    assert not set(aliases) & set(SLUGS), "an alias may not also be a slug"
    for alias, slug in aliases.items():
        assert get_problem(alias) is get_problem(slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_problem_has_honest_and_broken_solutions(slug: str) -> None:
    problem = get_problem(slug)
    for language in ("python", "cuda"):
        for broken in (False, True):
            path = solution_path(problem, language, broken)
            assert path.is_file(), f"{slug}: no {'broken' if broken else 'honest'} {language} solution at {path}"


# -- each problem's own checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_reference_rounded_to_the_output_type_passes(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, _, expected in all_case_data(slug, dtype):
        for exp, element in zip(expected, problem.output_elements(dtype), strict=True):
            passed, details = problem.verify_result(exp, exp.to(torch_dtype(element)), dtype)
            assert passed, (case["name"], details)


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_wrong_outputs_fail(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, _, expected in all_case_data(slug, dtype):
        for exp, element in zip(expected, problem.output_elements(dtype), strict=True):
            odt = torch_dtype(element)
            right = exp.to(odt)
            flat = exp.numel() // 2
            # torch has no abs, max or += for uint32/uint64 on the CPU: integer outputs are looked at as int64.
            plain = exp.to(torch.int64) if not exp.is_floating_point() else exp
            all_zero = not bool((plain.reshape(-1) != 0).any())
            wrong = {"ones" if all_zero else "zeros": torch.ones_like(right) if all_zero else torch.zeros_like(right)}
            bumped = right.clone()
            if odt.is_floating_point:
                bound = tolerance_bound(problem, dtype, exp).reshape(-1)
                bumped.reshape(-1)[flat] = (exp.reshape(-1)[flat].double() + 20 * bound[flat] + 1e-3).to(odt)
                one_nan = right.clone()
                one_nan.reshape(-1)[flat] = float("nan")
                wrong["one NaN"] = one_nan
            else:
                bumped.reshape(-1)[flat] = int(right.reshape(-1)[flat]) + 1
            wrong["one element off"] = bumped
            for what, actual in wrong.items():
                passed, _ = problem.verify_result(exp, actual, dtype)
                assert not passed, f"{case['name']}: {what} passed"


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_metadata_matches_the_signature(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    params = problem.parameters
    assert len({p.name for p in params}) == len(params), "parameter names are unique"
    assert len(problem.get_function_signature(dtype)["argtypes"]) == len(params)
    extras = [p for p in params if p.is_extra]
    for case in cpu_cases(slug, dtype) + problem.generate_test_cases(dtype, "gpu"):
        values = problem.get_extra_params(case)
        assert len(values) == len(extras), case["name"]
        for value, param in zip(values, extras, strict=True):
            if param.role == "array":
                assert isinstance(value, list | tuple) and all(isinstance(v, int) for v in value), param.name
            else:
                assert isinstance(value, float if param.scalar_type == "float" else int), (case["name"], param.name)
        assert problem.get_bytes(case, dtype) > 0
        if problem.score_metric == "gflops":
            assert problem.get_flops(case) > 0, case["name"]
    assert problem.flops_formula and problem.bytes_formula and problem.description


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_inputs_are_fresh_and_not_degenerate(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    for case, inputs, expected in all_case_data(slug, dtype):
        assert len(inputs) == sum(1 for p in problem.parameters if p.role == "input"), case["name"]
        assert len(expected) == problem.output_count(), case["name"]
        for tensor in inputs:
            if tensor.numel() > 8:
                assert tensor.reshape(-1).view(torch.uint8).unique().numel() > 2, f"{case['name']}: constant input"
        other, _, _ = case_inputs(problem, case, "cpu", SEED + 1000)
        assert any(not torch.equal(a, b) for a, b in zip(inputs, other, strict=True)), f"{case['name']}: not fresh"


@pytest.mark.parametrize("slug", SLUGS)
def test_cases_run_small_to_large_and_one_is_ragged(slug: str) -> None:
    problem = get_problem(slug)
    for dtype in problem.dtypes:
        for device_kind in ("gpu", "cpu"):
            cases = problem.generate_test_cases(dtype, device_kind)
            assert cases, device_kind
            names = [c["name"] for c in cases]
            assert len(set(names)) == len(names), names
            sizes = [problem.get_bytes(c, dtype) for c in cases]
            flops = [problem.get_flops(c) for c in cases]
            assert flops == sorted(flops) or sizes == sorted(sizes), (device_kind, names)
        gpu = problem.generate_test_cases(dtype, "gpu")
        assert any(any(d > 1 and d % 32 for d in c["dims"]) for c in gpu), f"{slug}: no ragged GPU case"
        assert max(problem.get_bytes(c, dtype) for c in gpu) >= 1 << 20, f"{slug}: the largest case is too small"


# -- the library's solutions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("slug", "dtype"), PROBLEM_DTYPES, ids=IDS)
def test_honest_python_solution_passes_every_cpu_case(slug: str, dtype: DType) -> None:
    problem = get_problem(slug)
    result = check_solution(problem, python_call(solution_path(problem, "python")), dtype, "cpu")
    failures = [f"{c.name}: {c.message}" for c in result.cases if not c.passed]
    assert result.passed, failures


@pytest.mark.parametrize("slug", SLUGS)
def test_broken_python_solution_fails(slug: str) -> None:
    problem = get_problem(slug)
    dtype = problem.dtypes[0]
    result = check_solution(
        problem, python_call(solution_path(problem, "python", broken=True)), dtype, "cpu", stop_at_first_failure=True
    )
    assert not result.passed, f"{slug}: the broken solution passed every CPU case"


@pytest.fixture(scope="module")
def cuda_arch() -> str:
    from runner.host.compile import cuda_arch as arch

    return arch(torch.cuda.get_device_capability())


def _compiled(problem: Problem, broken: bool, arch: str, tmp: Path) -> Path:
    from runner.host.compile import compile_cuda

    source = solution_path(problem, "cuda", broken).read_text(encoding="utf-8")
    return compile_cuda(source, tmp / ("broken" if broken else "honest"), arch).path


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("slug", SLUGS)
def test_honest_cuda_solution_passes_every_gpu_case(slug: str, cuda_arch: str, tmp_path: Path) -> None:
    problem = get_problem(slug)
    dtype = problem.dtypes[0]
    library = _compiled(problem, False, cuda_arch, tmp_path)
    result = check_solution(problem, cuda_call(library, problem, dtype), dtype, "gpu")
    assert result.passed, [f"{c.name}: {c.message}" for c in result.cases if not c.passed]


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("slug", SLUGS)
def test_broken_cuda_solution_fails(slug: str, cuda_arch: str, tmp_path: Path) -> None:
    problem = get_problem(slug)
    dtype = problem.dtypes[0]
    library = _compiled(problem, True, cuda_arch, tmp_path)
    result = check_solution(problem, cuda_call(library, problem, dtype), dtype, "gpu", stop_at_first_failure=True)
    assert not result.passed, f"{slug}: the broken CUDA solution passed every GPU case"


@pytest.mark.gpu
@pytest.mark.parametrize("slug", SLUGS)
def test_honest_python_solution_passes_every_gpu_case(slug: str) -> None:
    problem = get_problem(slug)
    dtype = problem.dtypes[0]
    result = check_solution(problem, python_call(solution_path(problem, "python")), dtype, "gpu")
    assert result.passed, [f"{c.name}: {c.message}" for c in result.cases if not c.passed]


def test_gpu_cases_are_big_enough_to_time() -> None:
    # The largest case of each problem moves at least a megabyte or does a gigaflop: well above launch latency.
    small = []
    for slug, problem in builtin_problems().items():
        dtype = problem.dtypes[0]
        cases = problem.generate_test_cases(dtype, "gpu")
        biggest = max(cases, key=lambda c: problem.get_bytes(c, dtype))
        if problem.get_bytes(biggest, dtype) < 1 << 20 and problem.get_flops(biggest) < 1e9:
            small.append(slug)
    assert not small, small
