"""matmul-sigmoid-sum: the sum of sigmoid(A · B) over every element, one float out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MatmulSigmoidSum(MatmulProblem):
    slug = "matmul-sigmoid-sum"
    title = "Matrix Multiplication with Sigmoid and Sum"
    description = (
        "Multiply A (M×K) by B (K×N), apply the logistic sigmoid `1 / (1 + exp(-x))` to every element of the "
        "product, and write the sum of all M·N results to `output[0]` (a single float). Row-major and contiguous. "
        "The product never needs to reach memory: reduce it inside the GEMM's epilogue. Summing millions of "
        "values into one float32 accumulator loses digits; sum in blocks (a tree) and combine the partial sums."
    )
    tags = ("matmul", "reduction", "fused", "compute-bound")
    parameters = (
        Param("A", "input", doc="M×K"),
        Param("B", "input", doc="K×N"),
        Param("output", "output", doc="1 value: the sum"),
        Param("M", "scalar", "size_t", "rows of A"),
        Param("N", "scalar", "size_t", "columns of B"),
        Param("K", "scalar", "size_t", "columns of A, rows of B"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("M", "N", "K")
    flops_formula = "2 · M · N · K + 3 · M · N + (M · N − 1) (the product, a sigmoid per element, the sum)"
    bytes_formula = "(M·K + K·N + 1) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on a sum near 10^5.
    tolerances = tensara_gemm_tolerances(1e-3)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        m, n, k = dims
        kw: dict[str, Any] = {"generator": gen, "device": gen.device, "dtype": torch.float32}
        # With plain Gaussian inputs the products are ±√K, their sigmoids are nearly 0 or 1, and the sum is
        # M·N/2 to within the tolerance whatever the product was. Here product (i, j) is about row_i · col_j,
        # with scales of order 1: most sigmoids sit in their curved range, the sum depends on this draw, and a
        # product missing some terms shifts every element the same way, so the sum moves well past the bound.
        rows = torch.rand((m, 1), **kw) + 0.5
        a = torch.rand((m, k), **kw) * rows
        cols = torch.randn((1, n), **kw) + 0.3
        b = (torch.randn((k, n), **kw) + cols) * (2.0 / k)
        return a.to(torch.float32), b.to(torch.float32)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, b = args[0].double(), args[1].double()
        return (a @ b).sigmoid().sum().reshape(1)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"A": (m, k), "B": (k, n), "output": (1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k + 3 * m * n + (m * n - 1)
