"""The batched check of a batch's outputs passes only what the exact per-output check passes."""

from __future__ import annotations

import pytest
import torch

from problems.base import Tolerance
from problems.verification import all_within_tolerance, compare_outputs

TOL = Tolerance(rtol=1e-4, atol=1e-4)


def _sets(count: int, n: int = 257, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    # Very different magnitudes per set: each set's atol scales with its own RMS, never the batch's.
    return [torch.randn(n, generator=g) * 10.0 ** (k % 5 - 2) for k in range(count)]


def test_right_outputs_pass_at_once() -> None:
    expected = _sets(8)
    actual = [e + e.abs() * 5e-5 for e in expected]
    assert all(compare_outputs(e, a, TOL)[0] for e, a in zip(expected, actual, strict=True))
    assert all_within_tolerance(expected, actual, TOL)


@pytest.mark.parametrize("fault", ["nan", "one_element_off", "poison", "shape"])
def test_any_wrong_output_fails_the_batch(fault: str) -> None:
    expected = _sets(6)
    actual = [e.clone() for e in expected]
    if fault == "nan":
        actual[3][17] = float("nan")
    elif fault == "one_element_off":
        actual[5][200] += 1.0
    elif fault == "poison":
        actual[0].fill_(float("nan"))
    else:
        actual[2] = actual[2][:-1]
    assert not all_within_tolerance(expected, actual, TOL)


def test_a_small_set_is_judged_by_its_own_scale_not_the_batchs() -> None:
    # With one big set beside it, a pooled RMS would let a small set's error through.
    small = torch.full((64,), 1e-3)
    big = torch.full((64,), 1e3)
    wrong_small = small + 1e-4 * 1e-3 * 50  # 50x its own atol
    assert not compare_outputs(small, wrong_small, TOL)[0]
    assert not all_within_tolerance([small, big], [wrong_small, big.clone()], TOL)


def test_an_output_exactly_at_the_bound_is_left_to_the_exact_check() -> None:
    expected = torch.ones(16, dtype=torch.float64)
    scale = 1.0  # the RMS of ones
    at_bound = expected + (TOL.atol * scale + TOL.rtol * 1.0) * (1 - 1e-9)
    assert compare_outputs(expected, at_bound, TOL)[0]  # the exact check passes it...
    assert not all_within_tolerance([expected], [at_bound], TOL)  # ...the batched one defers to it


def test_exact_types_and_other_shapes_are_left_to_the_exact_check() -> None:
    ints = [torch.arange(10), torch.arange(10)]
    assert not all_within_tolerance(ints, [t.clone() for t in ints], TOL)
    assert not all_within_tolerance([], [], TOL)


def test_half_precision_outputs_are_widened_before_the_check() -> None:
    expected = [e.to(torch.float16) for e in _sets(4)]
    assert all_within_tolerance(expected, [e.clone() for e in expected], Tolerance(rtol=5e-3, atol=5e-3))
