"""Tensara's semantics for the quantization problems (docs/tensara-semantics.md lists what was compared).

- mxfp4-quantize, mxfp8-quantize and nvfp4-quantize are checked on decoded values, as Tensara checked them, so a
  +0 written for -0 passes, while a wrong scale, a wrong rounding or an all-zero answer still fails.
- mxfp4-gemm, mxfp8-gemm, nvfp4-quantize, nvfp4-dequantize and nvfp4-gemm pass their scales in the swizzled
  128x4 layout of cuBLAS's block-scaled GEMMs, which torchao's `to_mx(..., is_swizzled_scales=True)` and
  flashinfer's `nvfp4_quantize` produced for Tensara.
- The three GEMMs accept at least what Tensara's allclose(rtol=2e-2, atol=5e-2) accepted on its own data.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from problems.registry import get_problem
from tests.problems.selfcheck import SOLUTIONS_DIR, check_solution, load_python, output_buffers, python_call

QUANTIZE = ("mxfp4-quantize", "mxfp8-quantize", "nvfp4-quantize")
MX_QUANTIZE = ("mxfp4-quantize", "mxfp8-quantize")
# The -0 code of each format: the sign bit alone, in a nibble for E2M1, in a byte for E4M3.
NEGATIVE_ZERO = {"mxfp4-quantize": 0x8, "mxfp8-quantize": 0x80, "nvfp4-quantize": 0x8}
SWIZZLED = ("mxfp4-gemm", "mxfp8-gemm", "nvfp4-quantize", "nvfp4-dequantize", "nvfp4-gemm")


def solution_file(slug: str, suffix: str = "") -> Any:
    return SOLUTIONS_DIR / "quantization" / f"{slug.replace('-', '_')}{suffix}.py"


def element_codes(slug: str, q: torch.Tensor) -> torch.Tensor:
    """Each element's code: the nibbles of packed E2M1, the bytes of E4M3."""
    if slug != "mxfp8-quantize":
        return torch.stack((q & 0xF, q >> 4), dim=-1).reshape(q.shape[0], -1)
    return q


def inputs_with_small_negatives(slug: str, case: dict[str, Any], seed: int) -> tuple[torch.Tensor, ...]:
    """The case's input with one element in 8 replaced by a tiny negative (-2^-60, or -2^-20 in float16): far below
    any block's step, so the reference writes -0 there."""
    (a,) = case["create_inputs"](torch.Generator().manual_seed(seed))
    picked = torch.zeros_like(a, dtype=torch.bool)
    picked[:, 3::8] = True
    tiny = -(2.0**-20) if a.dtype == torch.float16 else -(2.0**-60)
    return (torch.where(picked, torch.full_like(a, tiny), a).contiguous(),)


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


@pytest.mark.parametrize("slug", MX_QUANTIZE)
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


# -- nvfp4-quantize: decoded values and the padding -------------------------------------------------------------


def nvfp4_quantize_answer(seed: int) -> tuple[Any, tuple[torch.Tensor, ...], list[torch.Tensor]]:
    """nvfp4-quantize's ragged CPU case (its scale buffer has padding), the reference, and a right answer whose
    padding holds NaN bytes (the poison)."""
    problem = get_problem("nvfp4-quantize")
    case = problem.generate_test_cases("float32", "cpu")[0]
    inputs = case["create_inputs"](torch.Generator().manual_seed(seed))
    expected = problem.reference_outputs(inputs, problem.get_extra_params(case))
    answer = output_buffers(problem, "float32", expected)
    load_python(solution_file("nvfp4-quantize"))(*problem.arguments(inputs, answer, problem.get_extra_params(case)))
    return problem, expected, answer


def test_nvfp4_quantize_ignores_the_padding_and_checks_every_real_scale() -> None:
    from problems.builtin.quantization._formats import swizzled_offsets

    problem, (q_ref, scale_ref), (q, scale) = nvfp4_quantize_answer(7)
    rows, half_k = q_ref.shape
    real = torch.zeros(scale_ref.numel(), dtype=torch.bool)
    real[swizzled_offsets(rows, 2 * half_k // 16).reshape(-1)] = True
    assert bool((~real).any()), "the ragged case has padding"
    assert problem.verify_result(q_ref, q, "float32")[0]
    # The padding is free: NaN (the poison), zeros or anything else.
    poisoned = scale.clone()
    poisoned.view(torch.uint8).reshape(-1)[~real] = 0xFF
    assert problem.verify_result(scale_ref, poisoned, "float32")[0]
    zeroed = scale.clone()
    zeroed.view(torch.uint8).reshape(-1)[~real] = 0
    assert problem.verify_result(scale_ref, zeroed, "float32")[0]
    # Every real scale counts: one E4M3 step up at the last real entry, or the scales written row-major, fail.
    bumped = scale.clone()
    last = int(real.nonzero()[-1, 0])
    bumped.view(torch.uint8).reshape(-1)[last] += 1
    assert not problem.verify_result(scale_ref, bumped, "float32")[0]
    row_major = scale.clone()
    values = scale.view(torch.uint8).reshape(-1)[swizzled_offsets(rows, 2 * half_k // 16).reshape(-1)]
    row_major.view(torch.uint8).reshape(-1)[: values.numel()] = values
    assert not problem.verify_result(scale_ref, row_major, "float32")[0]


def test_nvfp4_quantize_fails_zeros_and_a_lowered_code() -> None:
    problem, (q_ref, scale_ref), (q, scale) = nvfp4_quantize_answer(8)
    assert not problem.verify_result(q_ref, torch.zeros_like(q), "float32")[0]
    assert not problem.verify_result(scale_ref, torch.zeros_like(scale), "float32")[0]
    # The largest code of the first block, one lower: a whole E2M1 step.
    codes = element_codes("nvfp4-quantize", q).clone()
    top = int((codes[0, :16] & 0x7).argmax())
    codes[0, top] -= 1
    assert not problem.verify_result(q_ref, codes[:, 0::2] | (codes[:, 1::2] << 4), "float32")[0]


# -- the swizzled 128x4 layout ----------------------------------------------------------------------------------


def blocked_by_reshape(scales: torch.Tensor) -> torch.Tensor:
    """The cuBLAS block-scaling-factor layout built the way torchao builds it (pad to whole 128 × 4 tiles, then
    tile by tile, rows split 4 × 32 and the two swapped): an independent statement of the byte order."""
    rows, cols = scales.shape
    padded_rows, padded_cols = -(-rows // 128) * 128, -(-cols // 4) * 4
    padded = torch.zeros(padded_rows, padded_cols, dtype=scales.dtype)
    padded[:rows, :cols] = scales
    tiles = padded.view(padded_rows // 128, 128, padded_cols // 4, 4).permute(0, 2, 1, 3)
    return tiles.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1)


@pytest.mark.parametrize(("rows", "blocks"), [(128, 4), (17, 2), (129, 5), (256, 32), (1000, 63)])
def test_the_swizzle_is_cublas_block_scaling_layout(rows: int, blocks: int) -> None:
    from problems.builtin.quantization._formats import swizzle, swizzled_shape, unswizzle

    scales = torch.randint(1, 255, (rows, blocks), generator=torch.Generator().manual_seed(rows), dtype=torch.int32)
    laid_out = swizzle(scales, torch.zeros(swizzled_shape(rows, blocks), dtype=torch.int32))
    assert torch.equal(laid_out.reshape(-1), blocked_by_reshape(scales))
    assert torch.equal(unswizzle(laid_out, rows, blocks), scales)


def test_the_swizzle_places_rows_as_documented() -> None:
    from problems.builtin.quantization._formats import swizzled_offsets

    offsets = swizzled_offsets(256, 8)
    # Row r of a tile at (r % 32)·16 + (r / 32)·4, block b at + b; tiles of 512 bytes, row-major over the grid.
    assert offsets[1, 0] == 16 and offsets[32, 0] == 4 and offsets[0, 3] == 3 and offsets[33, 1] == 16 + 4 + 1
    assert offsets[0, 4] == 512 and offsets[128, 0] == 2 * 512 and offsets[128, 4] == 3 * 512


@pytest.mark.parametrize("slug", SWIZZLED)
def test_swizzled_problems_are_version_2_and_state_the_layout(slug: str) -> None:
    problem = get_problem(slug)
    assert problem.version == 2
    assert "128×4" in problem.description and "(r % 32)·16 + ((r % 128) / 32)·4 + b % 4" in problem.description
    scale_docs = [p.doc for p in problem.parameters if p.name.startswith("scale")]
    assert scale_docs and all("swizzled 128×4" in doc for doc in scale_docs)


@pytest.mark.parametrize("slug", ["mxfp4-gemm", "mxfp8-gemm", "nvfp4-gemm", "nvfp4-dequantize"])
def test_the_reference_reads_the_swizzled_scales(slug: str) -> None:
    # Swapping two real scales of the first operand within one tile changes the reference: it reads them where the
    # layout puts them (a reference that read them row-major would see other bytes change, or none).
    from problems.builtin.quantization._formats import swizzled_offsets

    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[0]
    inputs = list(case["create_inputs"](torch.Generator().manual_seed(3)))
    extras = problem.get_extra_params(case)
    expected = problem.reference_outputs(tuple(inputs), extras)[0]
    q, scale = inputs[0], inputs[1]
    block = 32 if slug.startswith("mx") else 16
    offsets = swizzled_offsets(q.shape[0], q.shape[1] * 8 // (8 if slug == "mxfp8-gemm" else 4) // block)
    changed = scale.clone()
    flat = changed.view(torch.uint8).reshape(-1)
    # Row 1's first scale: byte 16 of the tile, not byte k/block as row-major would have it.
    flat[int(offsets[1, 0])] = flat[int(offsets[1, 0])] + 1
    inputs[1] = changed
    after = problem.reference_outputs(tuple(inputs), extras)[0]
    differs = (after != expected).any(dim=-1)
    assert bool(differs[1]) and not bool(differs[0]) and not bool(differs[2:].any())


# -- the GEMM tolerances ----------------------------------------------------------------------------------------


def tensara_like_product(slug: str, k: int = 1024) -> torch.Tensor:
    """C of operands drawn as Tensara drew them at its smallest k (randn for MX, uniform [-1, 1) float16 for
    NVFP4), quantized exactly; 64 × 64 is enough, since rms(C) depends on k and the distribution only."""
    from problems.builtin.quantization import _formats as f

    gen = torch.Generator().manual_seed(11)
    operands = []
    for _ in range(2):
        if slug.startswith("mx"):
            emax = f.EMAX_E2M1 if slug == "mxfp4-gemm" else f.EMAX_E4M3
            scale, scaled = f.mx_quantize(torch.randn(64, k, generator=gen), emax)
            values = (
                f.e2m1_decode(f.e2m1_encode(scaled)) if slug == "mxfp4-gemm" else f.e4m3_decode(f.e4m3_encode(scaled))
            )
            operands.append(f.mx_dequantize(values, scale))
        else:
            a = (torch.rand(64, k, generator=gen) * 2 - 1).half()
            sf_g = f.FP4_MAX * f.E4M3_MAX / float(a.float().abs().max())
            q, scales = f.nv_quantize(a, sf_g)
            operands.append(f.nv_dequantize(q, scales.to(torch.float8_e4m3fn), sf_g))
    return operands[0] @ operands[1].T


@pytest.mark.parametrize("slug", ["mxfp4-gemm", "mxfp8-gemm", "nvfp4-gemm"])
def test_the_gemms_accept_what_tensaras_allclose_accepted(slug: str) -> None:
    problem = get_problem(slug)
    expected = tensara_like_product(slug)
    # Just inside allclose(rtol=2e-2, atol=5e-2): |actual − expected| = 0.99 · (5e-2 + 2e-2 · |expected|).
    error = 0.99 * (5e-2 + 2e-2 * expected.abs())
    sign = torch.where(torch.arange(expected.numel()).reshape(expected.shape) % 2 == 0, 1.0, -1.0).double()
    actual = expected + sign * error
    if slug == "nvfp4-gemm":
        # float16 output: round toward the reference, so that rounding cannot step outside Tensara's bound either.
        actual = torch.where((actual.half().double() - expected).abs() <= error, actual.half(), expected.half())
    else:
        actual = actual.float()
    passed, details = problem.verify_result(expected, actual, "float32")
    assert passed, details
    # Tensara's bound is the edge: three times it fails.
    assert not problem.verify_result(
        expected, (expected + 3 * sign * (5e-2 + 2e-2 * expected.abs())).float(), "float32"
    )[0]
