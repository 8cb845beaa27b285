"""poly-multiply-ff: the product of two degree-(n−1) polynomials with coefficients modulo 2^31 − 1."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.crypto._field import MERSENNE31, convolve_mod_mersenne31, residues, with_edges
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class PolyMultiplyFF(KernelProblem):
    slug = "poly-multiply-ff"
    title = "Polynomial Multiplication over Finite Field"
    description = (
        "Multiply two polynomials of degree n − 1 whose coefficients lie in the prime field of p = 2^31 − 1 = "
        "2147483647. `d_input1` and `d_input2` hold the n coefficients of a(x) and b(x), constant term first, "
        "as `uint32_t` residues in [0, p). Write the 2n − 1 coefficients of c(x) = a(x) · b(x) to `d_output`, "
        "constant term first: `c[k] = (sum over i + j = k of a[i] * b[j]) mod p`, each fully reduced into "
        "[0, p). This is the full (linear, not cyclic) product. A single product needs 62 bits and a sum of n "
        "of them more than 64, so reduce as you accumulate. n is not a power of two in every case. Outputs are "
        "compared exactly."
    )
    tags = ("crypto", "finite-field", "polynomial", "convolution")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("d_input1", "input", doc="n coefficients of a(x), constant term first", element="uint32"),
        Param("d_input2", "input", doc="n coefficients of b(x), constant term first", element="uint32"),
        Param("d_output", "output", doc="2n − 1 coefficients of a(x)·b(x) mod 2^31 − 1", element="uint32"),
        Param("n", "scalar", "size_t", "coefficients per input polynomial"),
    )
    # n: ragged and small, then up to 10^5 coefficients (2 · 10^10 operations).
    gpu_cases = ((1000,), (4096,), (16411,), (100000,))
    cpu_cases = ((1,), (7,), (300,))
    dim_names = ("n",)
    flops_formula = "2 · n² (a multiply and an add per coefficient pair)"
    bytes_formula = "(2n + 2n − 1) · 4 (read both polynomials, write the product)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"d_input1": (n,), "d_input2": (n,), "d_output": (2 * n - 1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return 2 * dims[0] ** 2

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        return tuple(with_edges(residues(dims, MERSENNE31, gen), MERSENNE31, gen).to(torch.uint32) for _ in range(2))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        return convolve_mod_mersenne31(args[0], args[1]).to(torch.uint32)
