"""diagonal-matmul: C = diag(a) · B, scaling row i of an N×M matrix by a[i]."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.matmul._gemm import MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class DiagonalMatmul(MatmulProblem):
    slug = "diagonal-matmul"
    title = "Diagonal Matrix Multiplication"
    description = (
        "Multiply a diagonal N×N matrix, given only by its diagonal `diagonal_a` (N values), by an N×M matrix: "
        "`output_c[i][j] = diagonal_a[i] * input_b[i][j]`. `input_b` and `output_c` are row-major and contiguous. "
        "One multiply per element: the work is reading B and writing C at full memory bandwidth."
    )
    tags = ("matmul", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("diagonal_a", "input", doc="N, the diagonal of A"),
        Param("input_b", "input", doc="N×M"),
        Param("output_c", "output", doc="N×M"),
        Param("n", "scalar", "size_t", "rows of B and C, length of the diagonal"),
        Param("m", "scalar", "size_t", "columns of B and C"),
    )
    # n×m: ragged, then up to 2 × 512 MB moved in float32.
    gpu_cases = ((1000, 1003), (4096, 4096), (6151, 8191), (16384, 8192))
    cpu_cases = ((7, 33), (129, 257), (512, 1000))
    dim_names = ("n", "m")
    flops_formula = "N · M (one multiply per element)"
    bytes_formula = "(N + 2 · N · M) · sizeof(dtype) (read the diagonal and B, write C)"
    # Tensara: 1e-2 absolute on outputs of RMS 1/3.
    tolerances = tensara_gemm_tolerances(3e-2)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, b = args[0].double(), args[1].double()
        return a[:, None] * b

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, m = dims
        return {"diagonal_a": (n,), "input_b": (n, m), "output_c": (n, m)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, m = dims
        return n * m
