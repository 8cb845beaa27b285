"""layer-norm: normalize each sample of a (B, F, D1, D2) tensor over its last three dimensions, then scale and
shift elementwise by gamma and beta of shape (F, D1, D2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.norm._norm import shifted_normal
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType

EPS = 1e-5


class LayerNorm(KernelProblem):
    slug = "layer-norm"
    aliases = ("layernorm",)
    # Version 1 (`layernorm`) took a rows×cols matrix, per-column gamma and beta, and eps as a parameter.
    version = 2
    title = "Layer Normalization"
    description = (
        "Normalize each sample of a (B, F, D1, D2) tensor over its F·D1·D2 values, then scale and shift "
        "elementwise: `Y[b][k] = (X[b][k] - mean_b) / sqrt(var_b + eps) * gamma[k] + beta[k]`, where k runs over "
        "the (F, D1, D2) positions, `mean_b` and `var_b` are the mean and the biased variance (divided by "
        "F·D1·D2) of sample b, and `eps = 1e-5`. gamma and beta have shape (F, D1, D2). All buffers are "
        "contiguous and row-major, so each sample is one contiguous run of F·D1·D2 values."
    )
    tags = ("normalization", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32", "float16", "bfloat16")
    parameters = (
        Param("X", "input", doc="(B, F, D1, D2), row-major"),
        Param("gamma", "input", doc="(F, D1, D2): the scale"),
        Param("beta", "input", doc="(F, D1, D2): the shift"),
        Param("Y", "output", doc="(B, F, D1, D2), row-major"),
        Param("B", "scalar", "size_t", "batch size (each sample normalized on its own)"),
        Param("F", "scalar", "size_t", "features"),
        Param("D1", "scalar", "size_t", "first spatial size"),
        Param("D2", "scalar", "size_t", "second spatial size"),
    )
    gpu_cases = ((4, 3, 31, 37), (16, 64, 32, 32), (32, 32, 33, 47), (16, 64, 128, 128))
    cpu_cases = ((2, 3, 5, 7), (3, 4, 9, 11), (8, 16, 16, 16))
    dim_names = ("B", "F", "D1", "D2")
    flops_formula = "14 · B · F · D1 · D2 (Tensara's count for the statistics, the normalization and the affine)"
    bytes_formula = "(2 · B + 2) · F · D1 · D2 · sizeof(dtype) (read X, gamma and beta, write Y)"
    # Tensara: allclose(rtol=1e-3, atol=1e-2) on outputs of RMS 1.4.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-2),
    }
    # Default tolerances: the float16 and bfloat16 outputs are checked against a float64 reference of the rounded
    # inputs, so a kernel that accumulates in float32 and rounds once passes with a wide margin.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        _, f, d1, d2 = dims
        return {"X": dims, "gamma": (f, d1, d2), "beta": (f, d1, d2), "Y": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, f, d1, d2 = dims
        return 14 * b * f * d1 * d2

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        _, f, d1, d2 = dims
        x = shifted_normal(dims, (dims[0], 1, 1, 1), dtype, gen)
        return (x, randn((f, d1, d2), dtype, gen), randn((f, d1, d2), dtype, gen))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, gamma, beta = (t.double() for t in args[:3])
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        var = (x - mean).square().mean(dim=(1, 2, 3), keepdim=True)
        return (x - mean) * (var + EPS).rsqrt() * gamma + beta
