"""matmul-3d: C[n][m] = A[n][m] · B, a 3-D tensor times a matrix along its last dimension."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.matmul._gemm import MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Matmul3d(MatmulProblem):
    slug = "matmul-3d"
    title = "3D Tensor-Matrix Multiplication"
    description = (
        "Multiply an N×M×K tensor by a K×L matrix along the tensor's last dimension: "
        "`C[i][j][l] = sum(A[i][j][k] * B[k][l] for k < K)`, giving an N×M×L tensor. Everything is row-major and "
        "contiguous, so this is one (N·M)×K by K×L product; no size is a multiple of a tile in the ragged cases."
    )
    difficulty = "hard"
    parameters = (
        Param("A", "input", doc="N×M×K"),
        Param("B", "input", doc="K×L"),
        Param("C", "output", doc="N×M×L"),
        Param("n", "scalar", "size_t", "first dimension of A and C"),
        Param("m", "scalar", "size_t", "second dimension of A and C"),
        Param("k", "scalar", "size_t", "last dimension of A, rows of B"),
        Param("l", "scalar", "size_t", "columns of B, last dimension of C"),
    )
    # (n, m, k, l): ragged, cubes of 512, ragged again, then 69 GFLOP.
    gpu_cases = ((2, 500, 1001, 999), (16, 512, 512, 512), (8, 1000, 1536, 1003), (32, 1024, 1024, 1024))
    cpu_cases = ((2, 3, 5, 7), (3, 17, 33, 9), (4, 32, 65, 40))
    dim_names = ("n", "m", "k", "l")
    flops_formula = "2 · N · M · K · L (a multiply and an add per term)"
    bytes_formula = "(N·M·K + K·L + N·M·L) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 21 (K = 4096).
    tolerances = tensara_gemm_tolerances(1e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, m, k, l = dims  # noqa: E741  (Tensara's names)
        return {"A": (n, m, k), "B": (k, l), "C": (n, m, l)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, m, k, l = dims  # noqa: E741
        return 2 * n * m * k * l
