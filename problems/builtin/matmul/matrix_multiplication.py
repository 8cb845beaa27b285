"""matrix-multiplication: C = A · B with A of M×K, B of K×N, parameters (m, n, k)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, tensara_gemm_tolerances
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class MatrixMultiplication(KernelProblem):
    slug = "matrix-multiplication"
    aliases = ("matmul",)
    # Version 1 (`matmul`) took (m, k, n) and only square cases.
    version = 2
    title = "Matrix Multiplication"
    description = (
        "Multiply an M×K matrix by a K×N matrix: `output_c = input_a @ input_b`. All matrices are row-major and "
        "contiguous. Sizes are not multiples of any tile: handle the M, N and K tails."
    )
    tags = ("matmul", "compute-bound")
    difficulty = "medium"
    parameters = (
        Param("input_a", "input", doc="M×K"),
        Param("input_b", "input", doc="K×N"),
        Param("output_c", "output", doc="M×N"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("n", "scalar", "size_t", "columns of B and C"),
        Param("k", "scalar", "size_t", "columns of A, rows of B"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("m", "n", "k")
    flops_formula = "2 · M · N · K (a multiply and an add per term)"
    bytes_formula = "(M·K + K·N + M·N) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 21 (K = 4096).
    tolerances = tensara_gemm_tolerances(1e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, b = args[0], args[1]
        return a.double() @ b.double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"input_a": (m, k), "input_b": (k, n), "output_c": (m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k
