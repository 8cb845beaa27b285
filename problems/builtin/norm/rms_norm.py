"""rms-norm: divide each row of a B×N matrix by its root mean square (epsilon 1e-5, no weight)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.norm._norm import RowNorm
from problems.library import Dims

if TYPE_CHECKING:
    import torch

EPS = 1e-5


class RmsNorm(RowNorm):
    slug = "rms-norm"
    title = "RMS Normalization"
    description = (
        "Normalize each row of a B×N matrix by its root mean square: "
        "`Y[b][j] = X[b][j] / sqrt(mean_j(X[b][j]²) + eps)` with `eps = 1e-5`. The mean runs over the N entries "
        "of the row; there is no learned scale. X and Y are row-major and contiguous."
    )
    dtypes = ("float32", "float16", "bfloat16")
    dim_names = ("B", "N")
    parameters = (
        Param("X", "input", doc="B×N, row-major"),
        Param("Y", "output", doc="B×N, row-major"),
        Param("B", "scalar", "size_t", "rows"),
        Param("N", "scalar", "size_t", "features per row (the normalized dimension)"),
    )
    flops_formula = "B · (3N + 6) (square, add and scale per element; mean, eps, root and reciprocal per row)"
    bytes_formula = "2 · B · N · sizeof(dtype) (read X, write Y)"
    # Tensara: allclose(rtol=1e-3, atol=1e-2) on outputs of RMS 1.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-2),
    }

    def flops(self, dims: Dims) -> int:
        b, n = dims
        return b * (3 * n + 6)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * (x.square().mean(dim=1, keepdim=True) + EPS).rsqrt()
