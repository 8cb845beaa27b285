"""matrix-power: Aᵖ for a square matrix A; the exponent comes before the output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.matmul._gemm import MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MatrixPower(MatmulProblem):
    slug = "matrix-power"
    title = "Matrix Nth Power"
    description = (
        "Raise a square matrix to a whole power: `output_matrix = input_matrix` multiplied by itself `n` times "
        "(Aⁿ, n ≥ 2; `size` is the number of rows and columns). Row-major, contiguous. Repeated squaring needs "
        "about log₂(n) products instead of n − 1; the score counts (n − 1) products either way. Inputs are scaled "
        "so that every power keeps about the same magnitude, and the check is the float32 GEMM tolerance."
    )
    parameters = (
        Param("input_matrix", "input", doc="size×size"),
        Param("n", "scalar", "size_t", "the exponent, at least 2"),
        Param("output_matrix", "output", doc="size×size"),
        Param("size", "scalar", "size_t", "rows and columns of the matrix"),
    )
    # (size, exponent): exponents whose binary forms mix squarings and multiplications; up to 275 GFLOP counted.
    gpu_cases = ((513, 12), (1000, 9), (2047, 6), (4096, 3))
    cpu_cases = ((7, 5), (33, 2), (130, 13))
    dim_names = ("size", "n")
    flops_formula = "(n − 1) · 2 · size³ (the products of the plain loop)"
    bytes_formula = "2 · size² · sizeof(dtype) (read the matrix, write the power)"
    # Tensara: 1e-2 absolute on powers of 0.1·I + noise, far below 1e-2: it accepted zeros, ours does not.
    tolerances = tensara_gemm_tolerances(1e-4)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        size, _ = dims
        # A Gaussian matrix over √size has spectral radius about 1: its powers neither blow up nor vanish, so
        # float32 products stay within the tolerance of the float64 reference.
        return (randn((size, size), dtype, gen, scale=size**-0.5),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        a, n = args[0].double(), args[1]
        return torch.linalg.matrix_power(a, n)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        size, _ = dims
        return {"input_matrix": (size, size), "output_matrix": (size, size)}

    def extras(self, dims: Dims) -> list[Any]:
        size, n = dims
        return [n, size]

    def flops(self, dims: Dims) -> int:
        size, n = dims
        return (n - 1) * 2 * size**3
