"""group-norm: normalize each group of channels of each sample of an (N, C, HW) tensor, then apply a
per-channel scale and shift."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.norm._norm import shifted_normal
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType

EPS = 1e-5


class GroupNorm(KernelProblem):
    slug = "group-norm"
    title = "Group Normalization"
    description = (
        "Normalize an (N, C, HW) tensor in G groups of C/G consecutive channels (C is a multiple of G): for "
        "sample n and group g, take the mean and the biased variance of its (C/G)·HW values, then "
        "`Y[n][c][s] = (X[n][c][s] - mean_ng) / sqrt(var_ng + eps) * gamma[c] + beta[c]` with `eps = 1e-5`. "
        "HW is the flattened spatial size. All buffers are contiguous and row-major, so each (sample, group) is "
        "one contiguous run of (C/G)·HW values."
    )
    tags = ("normalization", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32", "float16", "bfloat16")
    parameters = (
        Param("X", "input", doc="(N, C, HW), row-major"),
        Param("gamma", "input", doc="C: per-channel scale"),
        Param("beta", "input", doc="C: per-channel shift"),
        Param("Y", "output", doc="(N, C, HW), row-major"),
        Param("N", "scalar", "size_t", "batch size"),
        Param("C", "scalar", "size_t", "channels, a multiple of G"),
        Param("HW", "scalar", "size_t", "spatial positions per channel"),
        Param("G", "scalar", "size_t", "groups"),
    )
    gpu_cases = ((3, 60, 1001, 6), (8, 128, 4096, 32), (16, 320, 4096, 32), (8, 512, 16384, 32))
    cpu_cases = ((2, 6, 7, 3), (3, 8, 33, 4), (4, 32, 64, 8))
    dim_names = ("N", "C", "HW", "G")

    def holdout_valid(self, dims: Dims) -> bool:
        return dims[1] % dims[3] == 0  # the channels split into whole groups
    flops_formula = (
        "8 · N · C · HW (per element: add for the mean; subtract, square and add for the variance; "
        "subtract and scale to normalize; multiply by gamma and add beta)"
    )
    bytes_formula = "(2 · N · C · HW + 2 · C) · sizeof(dtype) (read X, gamma and beta, write Y)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, c, hw, _ = dims
        return {"X": (n, c, hw), "gamma": (c,), "beta": (c,), "Y": (n, c, hw)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, c, hw, _ = dims
        return 8 * n * c * hw

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        n, c, hw, _ = dims
        # Each channel gets its own offset and spread, so statistics per channel (instance norm) or over the
        # wrong channels differ from those per group.
        x = shifted_normal((n, c, hw), (n, c, 1), dtype, gen)
        return (x, randn((c,), dtype, gen), randn((c,), dtype, gen))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, gamma, beta = (t.double() for t in args[:3])
        n, c, hw = x.shape
        g = int(args[6])
        grouped = x.reshape(n, g, (c // g) * hw)
        mean = grouped.mean(dim=2, keepdim=True)
        var = (grouped - mean).square().mean(dim=2, keepdim=True)
        y = ((grouped - mean) * (var + EPS).rsqrt()).reshape(n, c, hw)
        return y * gamma[:, None] + beta[:, None]
