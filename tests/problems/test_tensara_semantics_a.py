"""Tensara's semantics for the matmul, conv, norm and attention problems, vector-addition and matrix-scalar: the
formulas match torch's own functions, the float32 checks accept at least what Tensara's accepted, and honest
solutions written as Tensara competitors wrote them pass (docs/tensara-semantics.md lists what was compared)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from problems.base import Tolerance
from problems.registry import get_problem
from problems.verification import compare_outputs
from tests.problems.selfcheck import SOLUTIONS_DIR, check_solution, python_call

# slug: (Tensara's rtol, Tensara's absolute atol, RMS of the outputs of Tensara's smallest case, whether that atol
# exceeded the outputs so that it accepted an all-zero answer). The loosest stored definition counts: the GEMMs and
# convolutions at allclose(3e-3, 1e-2), the norms at (1e-3, 1e-2), matrix-scalar at (1e-4, 1e-3).
TENSARA_CHECKS: dict[str, tuple[float, float, float, bool]] = {
    "matrix-multiplication": (3e-3, 1e-2, 21.3, False),
    "square-matmul": (3e-3, 1e-2, 21.3, False),
    "matrix-vector": (3e-3, 1e-2, 21.3, False),
    "symmetric-matmul": (3e-3, 1e-2, 1000.0, False),
    "matmul-3d": (3e-3, 1e-2, 21.3, False),
    "matmul-4d": (3e-3, 1e-2, 1.87, False),
    "lower-trig-matmul": (3e-3, 1e-2, 6.16, False),
    "upper-trig-matmul": (3e-3, 1e-2, 6.16, False),
    "diagonal-matmul": (3e-3, 1e-2, 1 / 3, False),
    "matmul-sigmoid-sum": (3e-3, 1e-2, 1.3e5, False),
    "matmul-swish": (3e-3, 1e-2, 0.0925, False),
    "matmul-swish-scaling": (3e-3, 1e-2, 2.66, False),
    "gemm-multiply-leakyrelu": (3e-3, 1e-2, 3.09, False),
    "gemm-relu": (3e-3, 1e-2, 18.4, False),
    "matrix-power": (3e-3, 1e-2, 3.1e-3, True),
    "conv-1d": (3e-3, 1e-2, 150.0, False),
    "conv-2d": (3e-3, 1e-2, 15.0, False),
    "conv-square-3d": (3e-3, 1e-2, 8.7, False),
    "conv2d-relu-hardswish": (3e-3, 1e-2, 0.559, False),
    "scaled-dot-attention": (3e-3, 1e-2, 4.4e-4, True),
    "batch-norm": (1e-3, 1e-2, 1.0, False),
    "layer-norm": (1e-3, 1e-2, 1.41, False),
    "rms-norm": (1e-3, 1e-2, 1.0, False),
    "l1-norm": (1e-3, 1e-2, 3.1e-4, True),
    "l2-norm": (1e-3, 1e-2, 0.0156, True),
    "frobenius-norm": (1e-3, 1e-2, 4.9e-4, True),
    "vector-addition": (1e-4, 1e-4, 0.816, False),
    "matrix-scalar": (1e-4, 1e-3, 0.0577, False),
}


@pytest.mark.parametrize("slug", sorted(TENSARA_CHECKS))
def test_the_float32_check_accepts_what_tensaras_accepted(slug: str) -> None:
    rtol, atol, rms, accepted_zeros = TENSARA_CHECKS[slug]
    ours = get_problem(slug).tolerances["float32"]
    assert ours.rtol >= rtol, f"{slug}: rtol {ours.rtol} is tighter than Tensara's {rtol}"
    if not accepted_zeros:
        # (1 - 1e-9): 1e-2 / (1/3) is 0.030000000000000002 in floating point.
        assert ours.atol >= atol / rms * (1 - 1e-9), (
            f"{slug}: atol {ours.atol}·rms is tighter than Tensara's {atol} at rms {rms}"
        )


@pytest.mark.parametrize("slug", sorted(s for s, check in TENSARA_CHECKS.items() if check[3]))
def test_an_all_zero_answer_still_fails_where_tensaras_atol_accepted_it(slug: str) -> None:
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[-1]
    inputs = case["create_inputs"](torch.Generator().manual_seed(11))
    (expected,) = problem.reference_outputs(inputs, problem.get_extra_params(case))
    assert not problem.verify_result(expected, torch.zeros_like(expected, dtype=torch.float32), "float32")[0]


def test_a_tf32_product_passes_as_at_tensara_and_failed_the_old_bound() -> None:
    problem = get_problem("matrix-multiplication")
    tf32 = python_call(SOLUTIONS_DIR / "matmul" / "matrix_multiplication_tf32.py")
    result = check_solution(problem, tf32, "float32", "cpu")
    assert result.cases and all(c.passed for c in result.cases), [c.message for c in result.cases]
    # The float32-only bound it replaces (rtol 1e-4) rejected the same product.
    case = problem.generate_test_cases("float32", "cpu")[-1]
    a, b = case["create_inputs"](torch.Generator().manual_seed(5))
    (expected,) = problem.reference_outputs((a, b), problem.get_extra_params(case))
    out = torch.empty(expected.shape, dtype=torch.float32)
    tf32([a, b, out, *problem.get_extra_params(case)])
    assert not compare_outputs(expected, out, Tolerance(rtol=1e-4, atol=1e-4))[0]


def test_a_one_pass_layer_norm_with_a_host_loop_passes() -> None:
    one_pass = python_call(SOLUTIONS_DIR / "norm" / "layer_norm_one_pass.py")
    result = check_solution(get_problem("layer-norm"), one_pass, "float32", "cpu")
    assert result.cases and all(c.passed for c in result.cases), [c.message for c in result.cases]


def _reference(slug: str, *inputs: torch.Tensor) -> torch.Tensor:
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[0]
    (out,) = problem.reference_outputs(inputs, problem.get_extra_params(case))
    return out


def test_batch_norm_is_batchnorm2d_without_affine_or_running_stats() -> None:
    problem = get_problem("batch-norm")
    case = problem.generate_test_cases("float32", "cpu")[1]
    (x,) = case["create_inputs"](torch.Generator().manual_seed(2))
    (out,) = problem.reference_outputs((x,), problem.get_extra_params(case))
    expected = F.batch_norm(x.double(), None, None, training=True, eps=1e-5)  # biased variance over B, D1, D2
    assert torch.allclose(out, expected, rtol=0, atol=1e-10)


def test_layer_norm_normalizes_over_f_d1_d2_with_elementwise_gamma_and_beta() -> None:
    problem = get_problem("layer-norm")
    case = problem.generate_test_cases("float32", "cpu")[1]
    x, gamma, beta = case["create_inputs"](torch.Generator().manual_seed(3))
    (out,) = problem.reference_outputs((x, gamma, beta), problem.get_extra_params(case))
    expected = F.layer_norm(x.double(), x.shape[1:], gamma.double(), beta.double(), eps=1e-5)
    assert torch.allclose(out, expected, rtol=0, atol=1e-10)


def test_the_row_norms_match_tensaras_formulas() -> None:
    x = torch.randn(5, 37, generator=torch.Generator().manual_seed(4))
    xd = x.double()
    rms = xd / (xd.square().mean(dim=1, keepdim=True) + 1e-5).sqrt()
    assert torch.allclose(_reference("rms-norm", x), rms, rtol=0, atol=1e-12)
    l1 = xd / (xd.abs().sum(dim=1, keepdim=True) + 1e-10)
    assert torch.allclose(_reference("l1-norm", x), l1, rtol=0, atol=1e-12)
    l2 = xd / (xd.square().sum(dim=1, keepdim=True).sqrt() + 1e-10)
    assert torch.allclose(_reference("l2-norm", x), l2, rtol=0, atol=1e-12)


def test_scaled_dot_attention_is_torchs_without_mask() -> None:
    problem = get_problem("scaled-dot-attention")
    case = problem.generate_test_cases("float32", "cpu")[1]
    q, k, v = case["create_inputs"](torch.Generator().manual_seed(6))
    (out,) = problem.reference_outputs((q, k, v), problem.get_extra_params(case))
    expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    assert torch.allclose(out, expected, rtol=0, atol=1e-10)


def test_conv_1d_is_a_same_padded_unflipped_correlation() -> None:
    a = torch.randn(40, generator=torch.Generator().manual_seed(7))
    b = torch.tensor([1.0, 2.0, -3.0])
    out = get_problem("conv-1d").reference_outputs((a, b), [40, 3])[0]
    expected = F.conv1d(a.double()[None, None], b.double()[None, None], padding=1)[0, 0]
    assert torch.allclose(out, expected, rtol=0, atol=1e-12)
    assert abs(float(out[0]) - (2.0 * float(a[0]) - 3.0 * float(a[1]))) < 1e-12, (
        "the first output sees the kernel's middle and right taps, unflipped"
    )
