"""Elementwise comparison of a solution's output with the reference, with figures a competitor can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from problems.base import Tolerance


# Every byte of a buffer the solution must write is set to this before a call: NaN in every float type
# (float32, float16, bfloat16, float8 e4m3), -1 or the largest value in the integer types.
POISON_BYTE = 0xFF


def poison(buffer: torch.Tensor) -> None:
    """Fill `buffer` with the poison pattern, whatever its element type."""
    import torch

    buffer.reshape(-1).view(torch.uint8).fill_(POISON_BYTE)


def is_poisoned(buffer: torch.Tensor) -> bool:
    """Whether every byte of `buffer` still holds the poison pattern (the solution never wrote it)."""
    import torch

    return bool((buffer.reshape(-1).view(torch.uint8) == POISON_BYTE).all())


def is_exact_type(dtype: torch.dtype) -> bool:
    """Integer outputs (indices, counts, words, bytes) are compared exactly."""
    return not dtype.is_floating_point and not dtype.is_complex


def compare_exact(expected: torch.Tensor, actual: torch.Tensor) -> tuple[bool, dict[str, Any]]:
    """Check that `actual` holds exactly the values of `expected` (integer outputs)."""
    import torch

    if tuple(actual.shape) != tuple(expected.shape):
        return False, {"reason": f"output shape {tuple(actual.shape)} != expected {tuple(expected.shape)}"}
    exp, act = _as_int64(expected), _as_int64(actual)
    mismatches = exp != act
    count = int(mismatches.sum())
    details: dict[str, Any] = {"max_abs_error": 0.0, "max_rel_error": 0.0, "exact": True}
    if count == 0:
        return True, details
    flat = int(torch.nonzero(mismatches.reshape(-1))[0, 0])
    details.update(
        {
            "mismatches": count,
            "total": exp.numel(),
            "first_mismatch_index": _unravel(flat, tuple(exp.shape)),
            "expected_at_mismatch": int(exp.reshape(-1)[flat]),
            "actual_at_mismatch": int(act.reshape(-1)[flat]),
            "non_finite": 0,
        }
    )
    return False, details


def _as_int64(t: torch.Tensor) -> torch.Tensor:
    import torch

    t = t.detach()
    if t.dtype == torch.uint64:
        return t.contiguous().view(torch.int64)  # the same 64 bits; equality is all that is asked
    if t.is_floating_point():
        return t.round().to(torch.int64)
    return t.to(torch.int64)


def compare_outputs(expected: torch.Tensor, actual: torch.Tensor, tol: Tolerance) -> tuple[bool, dict[str, Any]]:
    """Check `actual` against `expected` elementwise; NaN or Inf anywhere fails.

    Returns (passed, details). Details always hold max_abs_error and max_rel_error; on failure they also hold
    the number of mismatches and the first mismatching index with both values there.
    """
    import torch

    if is_exact_type(actual.dtype):
        return compare_exact(expected, actual)
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
    if details.get("exact"):
        return (
            f"{details['mismatches']} of {details['total']} elements differ (compared exactly); first at [{idx}]: "
            f"expected {details['expected_at_mismatch']}, got {details['actual_at_mismatch']}"
        )
    parts = [
        f"{details['mismatches']} of {details['total']} elements differ",
        f"max abs error {details['max_abs_error']:.3g}",
        f"max rel error {details['max_rel_error']:.3g}",
        f"first at [{idx}]: expected {details['expected_at_mismatch']:.6g}, got {details['actual_at_mismatch']:.6g}",
    ]
    if details.get("non_finite"):
        parts.append(f"{details['non_finite']} NaN/Inf (never written?)")
    return "; ".join(parts)
