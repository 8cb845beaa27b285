"""matmul-swish-scaling: out = scale · swish(A · B); scale comes before the output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, MatmulProblem, case_float, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MatmulSwishScaling(MatmulProblem):
    slug = "matmul-swish-scaling"
    title = "Matrix Multiplication with Swish and Scaling"
    description = (
        "Multiply A (M×K) by B (K×N), apply Swish and scale: with `z = (A @ B)[i][j]`, "
        "`output[i][j] = scale * z * sigmoid(z)` where `sigmoid(z) = 1 / (1 + exp(-z))`. Row-major and "
        "contiguous; `scale` differs between cases. Fuse the activation into the product's epilogue."
    )
    tags = ("matmul", "activation-function", "fused", "compute-bound")
    parameters = (
        Param("A", "input", doc="M×K"),
        Param("B", "input", doc="K×N"),
        Param("scale", "scalar", "float", "multiplies the activation"),
        Param("output", "output", doc="M×N"),
        Param("M", "scalar", "size_t", "rows of A and the output"),
        Param("N", "scalar", "size_t", "columns of B and the output"),
        Param("K", "scalar", "size_t", "columns of A, rows of B"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("M", "N", "K")
    flops_formula = "2 · M · N · K + 5 · M · N (the product, then a sigmoid and two multiplies per output)"
    bytes_formula = "(M·K + K·N + M·N) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 2.7 (K = 512, scale 0.5).
    tolerances = tensara_gemm_tolerances(4e-3)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        m, n, k = dims
        # B over √K keeps the products near unit size, where Swish is curved; at ±√K it is nearly ReLU.
        return randn((m, k), dtype, gen), randn((k, n), dtype, gen, scale=k**-0.5)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, b = args[0].double(), args[1].double()
        scale = args[2]
        z = a @ b
        return scale * z * z.sigmoid()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"A": (m, k), "B": (k, n), "output": (m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_float(dims, 0.75, 0.5), *dims]

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k + 5 * m * n
