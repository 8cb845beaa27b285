"""batch-norm: normalize each feature of a (B, F, D1, D2) tensor over the batch and both spatial dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.norm._norm import shifted_normal
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType

EPS = 1e-5


class BatchNorm(KernelProblem):
    slug = "batch-norm"
    title = "Batch Normalization"
    description = (
        "Normalize a (B, F, D1, D2) tensor per feature, as training-mode batch normalization without a learned "
        "scale or shift: for each feature f, take the mean and the biased variance (divided by B·D1·D2) of the "
        "B·D1·D2 values `X[b][f][i][j]`, then `Y = (X - mean_f) / sqrt(var_f + eps)` with `eps = 1e-5`. "
        "X and Y are contiguous and row-major, so one feature's values lie in B separate runs of D1·D2."
    )
    tags = ("normalization", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("X", "input", doc="(B, F, D1, D2), row-major"),
        Param("Y", "output", doc="(B, F, D1, D2), row-major"),
        Param("B", "scalar", "size_t", "batch size"),
        Param("F", "scalar", "size_t", "features (each normalized on its own)"),
        Param("D1", "scalar", "size_t", "first spatial size"),
        Param("D2", "scalar", "size_t", "second spatial size"),
    )
    gpu_cases = ((5, 37, 29, 41), (8, 64, 56, 56), (32, 96, 35, 35), (16, 64, 128, 128))
    cpu_cases = ((2, 3, 5, 7), (4, 6, 9, 11), (8, 16, 16, 16))
    dim_names = ("B", "F", "D1", "D2")
    flops_formula = "(6B + 2) · F · D1 · D2 (Tensara's count: about 6 operations per element and 2 per position)"
    bytes_formula = "2 · B · F · D1 · D2 · sizeof(dtype) (read X, write Y)"
    # Tensara: allclose(rtol=1e-3, atol=1e-2) on outputs of RMS 1.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-2),
    }

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"X": dims, "Y": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, f, d1, d2 = dims
        return (6 * b + 2) * f * d1 * d2

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (shifted_normal(dims, (1, dims[1], 1, 1), dtype, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x = args[0].double()
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        var = (x - mean).square().mean(dim=(0, 2, 3), keepdim=True)
        return (x - mean) * (var + EPS).rsqrt()
