"""gemm-multiply-leakyrelu: out = leaky_relu((A · B) ⊙ C, alpha); alpha comes before the output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, MatmulProblem, case_float, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class GemmMultiplyLeakyRelu(MatmulProblem):
    slug = "gemm-multiply-leakyrelu"
    title = "GEMM with Element-wise Multiply and LeakyReLU"
    description = (
        "Multiply A (M×K) by B (K×N), multiply the product elementwise by C (M×N), then apply a leaky ReLU with "
        "slope `alpha` for negative values: with `x = (A @ B)[i][j] * C[i][j]`, "
        "`output[i][j] = x if x > 0 else alpha * x`. `alpha` differs between cases. Row-major and contiguous; "
        "fuse the multiply and the activation into the product's epilogue."
    )
    tags = ("matmul", "activation-function", "fused", "compute-bound")
    parameters = (
        Param("A", "input", doc="M×K"),
        Param("B", "input", doc="K×N"),
        Param("C", "input", doc="M×N, multiplied elementwise"),
        Param("alpha", "scalar", "float", "slope for negative values"),
        Param("output", "output", doc="M×N"),
        Param("M", "scalar", "size_t", "rows of A, C and the output"),
        Param("N", "scalar", "size_t", "columns of B, C and the output"),
        Param("K", "scalar", "size_t", "columns of A, rows of B"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("M", "N", "K")
    flops_formula = "2 · M · N · K + 2 · M · N (the product, then a multiply and a compare-and-scale per output)"
    bytes_formula = "(M·K + K·N + 2 · M·N) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 3.1 (K = 512).
    tolerances = tensara_gemm_tolerances(4e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, b, c = (t.double() for t in args[:3])
        alpha = args[3]
        x = (a @ b) * c
        return x.where(x > 0, alpha * x)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"A": (m, k), "B": (k, n), "C": (m, n), "output": (m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_float(dims, 0.05, 0.05), *dims]

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k + 2 * m * n
