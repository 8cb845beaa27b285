"""matrix-scalar: B = s · A for an n×n matrix A and a float s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.elementwise._scalars import as_float32
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


def case_scalar(dims: Dims) -> float:
    """The factor of a case, set by its size: signed, never ±1 or 0, so copying or negating the input fails."""
    (n,) = dims
    return as_float32((-1) ** n * (0.5 + 0.37 * (n % 7)))


class MatrixScalar(KernelProblem):
    slug = "matrix-scalar"
    title = "Matrix Scalar Multiplication"
    description = (
        "Multiply every element of an n×n row-major matrix by a float: "
        "`output_matrix[i][j] = scalar * input_matrix[i][j]`. The scalar differs between cases and may be negative."
    )
    tags = ("matmul", "scalar", "elementwise", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input_matrix", "input", doc="n×n, row-major"),
        Param("scalar", "scalar", "float", "the factor"),
        Param("output_matrix", "output", doc="n×n, row-major"),
        Param("n", "scalar", "size_t", "rows and columns"),
    )
    dtypes = ("float32",)
    # A ragged case, a power of two, then odd sizes up to 1.2 GB moved.
    gpu_cases = ((1000,), (4096,), (6151,), (12289,))
    cpu_cases = ((7,), (129,), (500,))
    dim_names = ("n",)
    flops_formula = "n² (one multiply per element)"
    bytes_formula = "2 · n² · sizeof(dtype) (read the matrix, write the result)"
    # Tensara: allclose(rtol=1e-4, atol=1e-3) on outputs of RMS 0.058 (its scalar 0.1).
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-4, atol=2e-2),
    }

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"input_matrix": (n, n), "output_matrix": (n, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_scalar(dims), *dims]

    def flops(self, dims: Dims) -> int:
        (n,) = dims
        return n * n

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() * args[1]
