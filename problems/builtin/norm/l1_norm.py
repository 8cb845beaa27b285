"""l1-norm: divide each row of a B×D matrix by the sum of its absolute values (plus 1e-10)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.norm._norm import RowNorm
from problems.library import Dims

if TYPE_CHECKING:
    import torch

EPS = 1e-10


class L1Norm(RowNorm):
    slug = "l1-norm"
    title = "L1 Normalization"
    description = (
        "Scale each row of a B×D matrix so that its absolute values sum to one: "
        "`Y[b][j] = X[b][j] / (sum_k |X[b][k]| + eps)` with `eps = 1e-10` (it only guards an all-zero row, which "
        "the tests never draw). X and Y are row-major and contiguous."
    )
    dim_names = ("B", "D")
    parameters = (
        Param("X", "input", doc="B×D, row-major"),
        Param("Y", "output", doc="B×D, row-major"),
        Param("B", "scalar", "size_t", "rows"),
        Param("D", "scalar", "size_t", "elements per row (the normalized dimension)"),
    )
    flops_formula = "B · (3D + 1) (absolute value, add and divide per element; eps per row)"
    # Tensara: allclose(rtol=1e-3, atol=1e-2) on outputs near 3e-4, so its atol accepted zeros; ours keeps its own.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-4),
    }

    def flops(self, dims: Dims) -> int:
        b, d = dims
        return b * (3 * d + 1)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x / (x.abs().sum(dim=1, keepdim=True) + EPS)
