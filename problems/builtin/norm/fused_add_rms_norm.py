"""fused-add-rms-norm: add a residual to each row, write the sum back out, and RMS-normalize it with a weight."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.norm._norm import CPU_ROWS, shifted_normal
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType

EPS = 1e-6


class FusedAddRmsNorm(KernelProblem):
    slug = "fused-add-rms-norm"
    title = "Fused Residual Add and RMS Normalization"
    description = (
        "The pre-normalization step of a transformer block, in one pass over memory. For each row b of the B×N "
        "matrices: `R[b] = X[b] + residual[b]`; write R to `residual_out`; then "
        "`Y[b][j] = R[b][j] / sqrt(mean_j(R[b][j]²) + eps) * weight[j]` with `eps = 1e-6`. Both outputs are "
        "checked. In half precision the statistics may come from the sum before or after rounding it to the "
        "output type: both are within tolerance. All buffers are row-major and contiguous; the inputs must not "
        "be modified."
    )
    tags = ("normalization", "fused", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32", "float16", "bfloat16")
    parameters = (
        Param("X", "input", doc="B×N: the sublayer's output"),
        Param("residual", "input", doc="B×N: the residual stream"),
        Param("weight", "input", doc="N: the RMSNorm scale"),
        Param("Y", "output", doc="B×N: the normalized sum"),
        Param("residual_out", "output", doc="B×N: X + residual"),
        Param("B", "scalar", "size_t", "rows (tokens)"),
        Param("N", "scalar", "size_t", "hidden size (the normalized dimension)"),
    )
    gpu_cases = ((333, 1021), (1024, 4096), (4096, 4096), (8192, 4096))
    cpu_cases = CPU_ROWS
    dim_names = ("B", "N")
    flops_formula = "B · (5N + 3) (add, square, accumulate, scale and weight per element; mean, eps, root per row)"
    bytes_formula = "(4 · B · N + N) · sizeof(dtype) (read X, residual and weight, write Y and residual_out)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        _, n = dims
        return {"X": dims, "residual": dims, "weight": (n,), "Y": dims, "residual_out": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, n = dims
        return b * (5 * n + 3)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn, uniform

        b, n = dims
        # The residual stream carries its own per-row scale and offset, so a norm of X alone is far off.
        return (randn(dims, dtype, gen), shifted_normal(dims, (b, 1), dtype, gen), uniform((n,), dtype, gen, 0.5, 1.5))

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        x, residual, weight = (t.double() for t in args[:3])
        r = x + residual
        return r * (r.square().mean(dim=1, keepdim=True) + EPS).rsqrt() * weight, r
