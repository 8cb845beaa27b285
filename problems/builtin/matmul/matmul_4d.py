"""matmul-4d: C[b][i][j] = A[b][i][j] · B, a 4-D tensor times a matrix along its last dimension."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.matmul._gemm import MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Matmul4d(MatmulProblem):
    slug = "matmul-4d"
    title = "4D Tensor-Matrix Multiplication"
    description = (
        "Multiply a b×i×j×l tensor by an l×k matrix along the tensor's last dimension: "
        "`C[b][i][j][k] = sum(A[b][i][j][x] * B[x][k] for x < l)`, giving a b×i×j×k tensor. Note the order of "
        "the sizes: `l` is the shared (inner) dimension and `k` the columns of B. Everything is row-major and "
        "contiguous."
    )
    difficulty = "hard"
    parameters = (
        Param("A", "input", doc="b×i×j×l"),
        Param("B", "input", doc="l×k"),
        Param("C", "output", doc="b×i×j×k"),
        Param("b", "scalar", "size_t", "first dimension of A and C"),
        Param("i", "scalar", "size_t", "second dimension of A and C"),
        Param("j", "scalar", "size_t", "third dimension of A and C"),
        Param("l", "scalar", "size_t", "last dimension of A, rows of B (the inner dimension)"),
        Param("k", "scalar", "size_t", "columns of B, last dimension of C"),
    )
    # (b, i, j, l, k): ragged, powers of two, ragged with a long inner dimension, then 52 GFLOP.
    gpu_cases = ((2, 16, 125, 127, 255), (4, 32, 64, 256, 512), (8, 32, 100, 1000, 999), (8, 64, 128, 512, 768))
    cpu_cases = ((1, 2, 3, 5, 7), (2, 3, 17, 33, 9), (2, 4, 8, 65, 40))
    dim_names = ("b", "i", "j", "l", "k")
    flops_formula = "2 · b · i · j · l · k (a multiply and an add per term)"
    bytes_formula = "(b·i·j·l + l·k + b·i·j·k) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 1.9 (l = 32).
    tolerances = tensara_gemm_tolerances(6e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        b, i, j, l, k = dims  # noqa: E741  (Tensara's names)
        return {"A": (b, i, j, l), "B": (l, k), "C": (b, i, j, k)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, i, j, l, k = dims  # noqa: E741
        return 2 * b * i * j * l * k
