"""vector-multiply-ff: c[i] = a[i] · b[i] mod 2^31 − 1 over uint32 words."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.crypto._field import MERSENNE31, residues, with_edges
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class VectorMultiplyFF(KernelProblem):
    slug = "vector-multiply-ff"
    title = "Vector Multiplication over Finite Field"
    description = (
        "Multiply two vectors elementwise in the prime field of the Mersenne prime p = 2^31 − 1 = 2147483647: "
        "`d_output[i] = (d_input1[i] * d_input2[i]) mod p`. Every input is a residue in [0, p) stored as a "
        "`uint32_t`, and every output must be the fully reduced residue in [0, p). The product of two residues "
        "needs 62 bits, so widen before multiplying. Outputs are compared exactly."
    )
    tags = ("crypto", "finite-field", "modular-arithmetic", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("d_input1", "input", doc="n residues modulo 2^31 − 1", element="uint32"),
        Param("d_input2", "input", doc="n residues modulo 2^31 − 1", element="uint32"),
        Param("d_output", "output", doc="n residues: the elementwise products modulo 2^31 − 1", element="uint32"),
        Param("n", "scalar", "size_t", "the vectors' length"),
    )
    # n: ragged, then up to 32 Mi elements (384 MB moved).
    gpu_cases = ((1000,), (100003,), (1 << 20,), (1 << 25,))
    cpu_cases = ((7,), (100,), (1001,))
    dim_names = ("n",)
    flops_formula = "2 · n (a multiply and a reduction per element)"
    bytes_formula = "3 · n · 4 (read two vectors, write one)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"d_input1": (n,), "d_input2": (n,), "d_output": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return 2 * dims[0]

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        return tuple(with_edges(residues(dims, MERSENNE31, gen), MERSENNE31, gen).to(torch.uint32) for _ in range(2))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        a, b = args[0].to(torch.int64), args[1].to(torch.int64)
        return (a * b % MERSENNE31).to(torch.uint32)
