"""matrix-vector: y = A · x with A of M×K row-major and x of K."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DTYPES, Param
from problems.builtin.matmul._gemm import MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MatrixVector(MatmulProblem):
    slug = "matrix-vector"
    # `matrix_vector` had the same arguments in the same places (its vector was named input_x, its sizes m, n),
    # so its solutions run unchanged: still version 1.
    aliases = ("matrix_vector",)
    title = "Matrix Vector Multiplication"
    description = (
        "Multiply an M×K matrix by a vector of K: `output_c[i] = sum(input_a[i][k] * input_b[k] for k < K)` for "
        "every `i < M`. The matrix is row-major and contiguous. Each matrix element is used once, so this is "
        "bound by reading A: one thread per row leaves most of the bandwidth unused."
    )
    tags = ("matmul", "vector", "memory-bound")
    difficulty = "easy"
    # Half precision matters here: this is the decode step of every language model.
    dtypes = DTYPES
    parameters = (
        Param("input_a", "input", doc="M×K"),
        Param("input_b", "input", doc="K"),
        Param("output_c", "output", doc="M"),
        Param("m", "scalar", "size_t", "rows of A, length of the output"),
        Param("k", "scalar", "size_t", "columns of A, length of the vector"),
    )
    # m×k: ragged, square, short and very wide (long dot products), then 256 MB of float32 matrix.
    gpu_cases = ((1000, 3001), (4096, 4096), (257, 65537), (8192, 8192))
    cpu_cases = ((33, 47), (256, 300), (1024, 1024))
    dim_names = ("m", "k")
    flops_formula = "2 · M · K (a multiply and an add per term)"
    bytes_formula = "(M·K + K + M) · sizeof(dtype) (read A and the vector, write the output)"
    # Tensara: 1e-2 absolute on outputs of RMS 21 (K = 4096).
    tolerances = tensara_gemm_tolerances(1e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"input_a": (m, k), "input_b": (k,), "output_c": (m,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, k = dims
        return 2 * m * k
