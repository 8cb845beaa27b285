"""gemm-relu: C = relu(A · Wᵀ + b), a linear layer (out×in weights) with bias and ReLU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DTYPES, DType, Param
from problems.builtin.matmul._gemm import MatmulProblem, linear_weight, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class GemmRelu(MatmulProblem):
    slug = "gemm-relu"
    aliases = ("gemm_relu",)
    # Version 1 (`gemm_relu`) was relu(A · B) with B of K×N and sizes (m, k, n); this one is Tensara's: a
    # linear layer with its weight out×in, a bias, and sizes (B, N, M).
    version = 2
    title = "GEMM with Bias and ReLU"
    description = (
        "A linear layer followed by ReLU: `C = max(A @ W.T + b, 0)`. A is B×N (B rows of N input features), "
        "W is M×N (out × in, the layout of a linear layer's weight, so each output column reads a row of W), b "
        "holds M biases, and C is B×M. Row-major and contiguous. Fuse the bias and the ReLU into the product's "
        "epilogue rather than making more passes."
    )
    tags = ("matmul", "activation-function", "fused", "compute-bound")
    dtypes = DTYPES
    parameters = (
        Param("A", "input", doc="B×N (batch × in_features)"),
        Param("W", "input", doc="M×N (out_features × in_features)"),
        Param("b", "input", doc="M"),
        Param("C", "output", doc="B×M"),
        Param("B", "scalar", "size_t", "rows of A and C (the batch)"),
        Param("N", "scalar", "size_t", "columns of A and W (in_features)"),
        Param("M", "scalar", "size_t", "rows of W, columns of C (out_features)"),
    )
    # (B, N, M): ragged everywhere, a K tail, a skinny output, then 137 GFLOP.
    gpu_cases = ((1000, 997, 1003), (1536, 1000, 2048), (4096, 4097, 96), (4096, 4096, 4096))
    cpu_cases = ((17, 7, 33), (64, 130, 96), (129, 255, 127))
    dim_names = ("B", "N", "M")
    flops_formula = "2 · B · N · M + B · M (the product, and a bias add per output; the max is not counted)"
    bytes_formula = "(B·N + M·N + M + B·M) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 18 (N = 2048).
    tolerances = tensara_gemm_tolerances(1e-3)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        batch, n, m = dims
        return randn((batch, n), dtype, gen), linear_weight((m, n), dtype, gen), randn((m,), dtype, gen)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, w, b = (t.double() for t in args[:3])
        return (a @ w.T + b).clamp_min(0.0)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        batch, n, m = dims
        return {"A": (batch, n), "W": (m, n), "b": (m,), "C": (batch, m)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        batch, n, m = dims
        return 2 * batch * n * m + batch * m
