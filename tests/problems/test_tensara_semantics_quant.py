"""Tensara's semantics for the MX quantization problems: Tensara checked mxfp4-quantize and mxfp8-quantize on the
decoded values (allclose, rtol 1e-3, atol 1e-3), so a +0 written for -0 passes here too, while a wrong scale, a
wrong rounding or an all-zero answer still fails (docs/tensara-semantics.md lists what was compared)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from problems.registry import get_problem
from tests.problems.selfcheck import SOLUTIONS_DIR, check_solution, load_python, output_buffers, python_call

QUANTIZE = ("mxfp4-quantize", "mxfp8-quantize")
# The -0 code of each format: the sign bit alone, in a nibble for E2M1, in a byte for E4M3.
NEGATIVE_ZERO = {"mxfp4-quantize": 0x8, "mxfp8-quantize": 0x80}


def solution_file(slug: str, suffix: str = "") -> Any:
    return SOLUTIONS_DIR / "quantization" / f"{slug.replace('-', '_')}{suffix}.py"


def element_codes(slug: str, q: torch.Tensor) -> torch.Tensor:
    """Each element's code: the nibbles of packed E2M1, the bytes of E4M3."""
    if slug == "mxfp4-quantize":
        return torch.stack((q & 0xF, q >> 4), dim=-1).reshape(q.shape[0], -1)
    return q


def inputs_with_small_negatives(slug: str, case: dict[str, Any], seed: int) -> tuple[torch.Tensor, ...]:
    """The case's input with one element in 8 replaced by -2^-60: far below any block's step, so the reference
    writes -0 there (the blocks keep their other elements, so their scales are unchanged)."""
    (a,) = case["create_inputs"](torch.Generator().manual_seed(seed))
    picked = torch.zeros_like(a, dtype=torch.bool)
    picked[:, 3::8] = True
    return (torch.where(picked, torch.full_like(a, -(2.0**-60)), a).contiguous(),)


def run_solution(slug: str, suffix: str, case: dict[str, Any], inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    problem = get_problem(slug)
    extras = problem.get_extra_params(case)
    expected = problem.reference_outputs(inputs, extras)
    outputs = output_buffers(problem, "float32", expected)
    load_python(solution_file(slug, suffix))(*problem.arguments(inputs, outputs, extras))
    return outputs


@pytest.mark.parametrize("slug", QUANTIZE)
def test_a_solution_writing_plus_zero_for_minus_zero_passes(slug: str) -> None:
    problem = get_problem(slug)
    for seed, case in enumerate(problem.generate_test_cases("float32", "cpu")):
        inputs = inputs_with_small_negatives(slug, case, seed)
        q_ref, scale_ref = problem.reference_outputs(inputs, problem.get_extra_params(case))
        q, scale = run_solution(slug, "_plus_zero", case, inputs)
        # The case holds -0 in the reference and +0 in the answer, so the bytes differ there.
        minus_zero = element_codes(slug, q_ref) == NEGATIVE_ZERO[slug]
        assert bool(minus_zero.any()), case["name"]
        assert bool((element_codes(slug, q)[minus_zero] == 0).all()), case["name"]
        assert not torch.equal(q, q_ref), case["name"]
        for exp, actual in ((q_ref, q), (scale_ref, scale)):
            passed, details = problem.verify_result(exp, actual, "float32")
            assert passed, (case["name"], details)


@pytest.mark.parametrize("slug", QUANTIZE)
def test_the_plus_zero_solution_passes_the_library_cases(slug: str) -> None:
    problem = get_problem(slug)
    result = check_solution(problem, python_call(solution_file(slug, "_plus_zero")), "float32", "cpu")
    assert result.cases and all(c.passed for c in result.cases), [c.message for c in result.cases]


@pytest.mark.parametrize("slug", QUANTIZE)
def test_the_broken_solution_still_fails(slug: str) -> None:
    problem = get_problem(slug)
    result = check_solution(problem, python_call(solution_file(slug, "_broken")), "float32", "cpu")
    assert result.cases and not all(c.passed for c in result.cases), [c.message for c in result.cases]


@pytest.mark.parametrize("slug", QUANTIZE)
def test_zeros_a_wrong_scale_and_a_wrong_code_fail(slug: str) -> None:
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[-1]
    inputs = case["create_inputs"](torch.Generator().manual_seed(4))
    q_ref, scale_ref = problem.reference_outputs(inputs, problem.get_extra_params(case))
    q = q_ref.to(torch.uint8)
    scale = scale_ref.to(torch.uint8)
    assert not problem.verify_result(q_ref, torch.zeros_like(q), "float32")[0]
    assert not problem.verify_result(scale_ref, torch.zeros_like(scale), "float32")[0]
    assert not problem.verify_result(scale_ref, scale + 1, "float32")[0]
    # The element of each block with the largest code, one code lower: a whole rounding step at the block's top.
    codes = element_codes(slug, q).clone()
    magnitude_bits = 0x7 if slug == "mxfp4-quantize" else 0x7F
    top = (codes & magnitude_bits).reshape(codes.shape[0], -1, 32).argmax(dim=-1)[0, 0]
    codes[0, top] -= 1
    lowered = codes if slug == "mxfp8-quantize" else codes[:, 0::2] | (codes[:, 1::2] << 4)
    assert not problem.verify_result(q_ref, lowered, "float32")[0]


def test_mxfp8_accepts_tensaras_absolute_slack_only_for_small_elements() -> None:
    # Tensara's atol of 1e-3 on values under 1 is 0.512 in E4M3 units: a step of 0.5 (values in [4, 8)) passes,
    # a step of 1 (values in [8, 16)) does not.
    problem = get_problem("mxfp8-quantize")
    values = torch.tensor([[4.0, 5.0, 8.0, 300.0] * 8])
    expected = values.to(torch.float8_e4m3fn).view(torch.uint8)
    small = torch.tensor([[4.5, 5.0, 8.0, 300.0] * 8]).to(torch.float8_e4m3fn).view(torch.uint8)
    large = torch.tensor([[4.0, 5.0, 9.0, 300.0] * 8]).to(torch.float8_e4m3fn).view(torch.uint8)
    assert problem.verify_result(expected, small, "float32")[0]
    assert not problem.verify_result(expected, large, "float32")[0]
