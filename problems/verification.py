"""Elementwise comparison of a solution's output with the reference, with figures a competitor can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from problems.base import Tolerance


def compare_outputs(expected: torch.Tensor, actual: torch.Tensor, tol: Tolerance) -> tuple[bool, dict[str, Any]]:
    """Check `actual` against `expected` elementwise; NaN or Inf anywhere fails.

    Returns (passed, details). Details always hold max_abs_error and max_rel_error; on failure they also hold
    the number of mismatches and the first mismatching index with both values there.
    """
    import torch

    if tuple(actual.shape) != tuple(expected.shape):
        return False, {"reason": f"output shape {tuple(actual.shape)} != expected {tuple(expected.shape)}"}
    exp = expected.detach().to(torch.float64)
    act = actual.detach().to(torch.float64)
    if exp.numel() == 0:
        return True, {"max_abs_error": 0.0, "max_rel_error": 0.0}
    rms = float(torch.sqrt(torch.mean(exp * exp)))
    scale = rms if rms > 0 else 1.0
    diff = (act - exp).abs()
    # NaN compares false, so a poisoned (never written) element always counts as a mismatch.
    ok = diff <= tol.atol * scale + tol.rtol * exp.abs()
    # Error figures are over the finite elements; non-finite ones are counted separately.
    finite = torch.isfinite(diff)
    finite_diff = torch.where(finite, diff, torch.zeros_like(diff))
    max_abs = float(finite_diff.max())
    rel = finite_diff / exp.abs().clamp_min(scale * 1e-6)
    details: dict[str, Any] = {
        "max_abs_error": max_abs,
        "max_rel_error": float(rel.max()),
        "rtol": tol.rtol,
        "atol": tol.atol * scale,
    }
    mismatches = ~ok
    count = int(mismatches.sum())
    if count == 0:
        return True, details
    flat = int(torch.nonzero(mismatches.reshape(-1))[0, 0])
    index = tuple(int(i) for i in _unravel(flat, tuple(exp.shape)))
    details.update(
        {
            "mismatches": count,
            "total": exp.numel(),
            "first_mismatch_index": list(index),
            "expected_at_mismatch": float(exp.reshape(-1)[flat]),
            "actual_at_mismatch": float(act.reshape(-1)[flat]),
            "non_finite": int((~finite).sum()),
        }
    )
    return False, details


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index: list[int] = []
    for dim in reversed(shape):
        index.append(flat % dim)
        flat //= dim
    return list(reversed(index))


def describe_mismatch(details: dict[str, Any]) -> str:
    """One line that says how an output was wrong, from `compare_outputs` details."""
    if "reason" in details:
        return str(details["reason"])
    if "first_mismatch_index" not in details:
        return "output matches"
    idx = ", ".join(str(i) for i in details["first_mismatch_index"])
    parts = [
        f"{details['mismatches']} of {details['total']} elements differ",
        f"max abs error {details['max_abs_error']:.3g}",
        f"max rel error {details['max_rel_error']:.3g}",
        f"first at [{idx}]: expected {details['expected_at_mismatch']:.6g}, got {details['actual_at_mismatch']:.6g}",
    ]
    if details.get("non_finite"):
        parts.append(f"{details['non_finite']} NaN/Inf (never written?)")
    return "; ".join(parts)
