"""gemm-bias-gelu: out = gelu(A · Wᵀ + bias), a linear layer (out×in weights) with the exact GELU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DTYPES, DType, Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, MatmulProblem, linear_weight
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class GemmBiasGelu(MatmulProblem):
    slug = "gemm-bias-gelu"
    title = "GEMM with Bias and GELU"
    description = (
        "The first half of a transformer's MLP: with `z = input_a @ weight.T + bias`, "
        "`output[i][j] = z * (1 + erf(z / sqrt(2))) / 2` (the exact GELU, not the tanh approximation). input_a "
        "is M×K, weight is N×K (out × in, a linear layer's layout), bias has N values and output is M×N. "
        "Row-major and contiguous. Fuse the bias and the GELU into the product's epilogue."
    )
    tags = ("matmul", "activation-function", "fused", "compute-bound")
    dtypes = DTYPES
    parameters = (
        Param("input_a", "input", doc="M×K"),
        Param("weight", "input", doc="N×K (out_features × in_features)"),
        Param("bias", "input", doc="N"),
        Param("output", "output", doc="M×N"),
        Param("m", "scalar", "size_t", "rows of the input and the output (tokens)"),
        Param("n", "scalar", "size_t", "rows of the weight, columns of the output (out_features)"),
        Param("k", "scalar", "size_t", "columns of the input and the weight (in_features)"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("m", "n", "k")
    flops_formula = "2 · M · N · K + 2 · M · N (the product, a bias add and a GELU per output, the GELU as one)"
    bytes_formula = "(M·K + N·K + N + M·N) · sizeof(dtype)"

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        m, n, k = dims
        return randn((m, k), dtype, gen), linear_weight((n, k), dtype, gen), randn((n,), dtype, gen)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        x, w, bias = (t.double() for t in args[:3])
        z = x @ w.T + bias
        return z * (1.0 + torch.special.erf(z * 2**-0.5)) * 0.5

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"input_a": (m, k), "weight": (n, k), "bias": (n,), "output": (m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k + 2 * m * n
