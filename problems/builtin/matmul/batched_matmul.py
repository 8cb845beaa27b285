"""batched-matmul: C[b] = A[b] · B[b] for a batch of independent products."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DTYPES, Param
from problems.builtin.matmul._gemm import MatmulProblem
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class BatchedMatmul(MatmulProblem):
    slug = "batched-matmul"
    title = "Batched Matrix Multiplication"
    description = (
        "Multiply `batch` independent pairs of matrices: `C[b] = A[b] @ B[b]` with A of batch×M×K, B of "
        "batch×K×N and C of batch×M×N, each row-major and contiguous (matrix b of A starts at `b·M·K`). Many "
        "small products or a few large ones: one launch should cover the whole batch."
    )
    dtypes = DTYPES
    parameters = (
        Param("A", "input", doc="batch×M×K"),
        Param("B", "input", doc="batch×K×N"),
        Param("C", "output", doc="batch×M×N"),
        Param("batch", "scalar", "size_t", "number of products"),
        Param("m", "scalar", "size_t", "rows of each A and C"),
        Param("n", "scalar", "size_t", "columns of each B and C"),
        Param("k", "scalar", "size_t", "columns of each A, rows of each B"),
    )
    # (batch, m, n, k): many small ragged products, three ragged large ones, cubes of 512, then 137 GFLOP.
    gpu_cases = ((64, 129, 127, 255), (3, 1000, 1003, 997), (32, 512, 512, 512), (8, 2048, 2048, 2048))
    cpu_cases = ((2, 7, 5, 3), (3, 33, 17, 65), (4, 64, 48, 130))
    dim_names = ("batch", "m", "n", "k")
    flops_formula = "2 · batch · M · N · K (a multiply and an add per term)"
    bytes_formula = "batch · (M·K + K·N + M·N) · sizeof(dtype)"

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        batch, m, n, k = dims
        return {"A": (batch, m, k), "B": (batch, k, n), "C": (batch, m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        batch, m, n, k = dims
        return 2 * batch * m * n * k
