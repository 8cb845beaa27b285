"""ecc-point-negation: −(x, y) = (x, −y mod p) for a batch of affine curve points, written interleaved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.crypto._field import residues
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


# The curve's field: Tensara's statement fixes p = 2^61 − 1, so its competitors may build the modulus in.
MERSENNE61 = (1 << 61) - 1


def case_prime(dims: Dims) -> int:
    """The field modulus of every case, passed as `p` as well."""
    return MERSENNE61


class EccPointNegation(KernelProblem):
    slug = "ecc-point-negation"
    # Version 1 drew p from four primes below 2^62 per case; Tensara's statement fixes p = 2^61 − 1, and a kernel
    # that builds that constant in (as its statement allows) failed three cases of four.
    version = 2
    title = "ECC Point Negation (Batched)"
    description = (
        "Negate n affine points of the curve y² = x³ + 7 over the prime field F_p, p = 2^61 − 1 (the Mersenne "
        "prime 2305843009213693951, also passed as `p`). Point i is `(xs[i], ys[i])`, both residues in [0, p) "
        "stored as `uint64_t`. "
        "The negation of (x, y) is (x, (p − y) mod p), whatever the curve's coefficients. Write the results "
        "interleaved into `out_xy`, which holds 2n words: `out_xy[2*i] = xs[i]` and `out_xy[2*i + 1] = "
        "(p - ys[i]) % p`. Points with y = 0 (points of order two) occur and are their own negation, so the "
        "output must be 0 there, not p. Outputs are compared exactly."
    )
    tags = ("crypto", "elliptic-curve", "modular-arithmetic", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("xs", "input", doc="n x-coordinates in [0, p)", element="uint64"),
        Param("ys", "input", doc="n y-coordinates in [0, p)", element="uint64"),
        Param("p", "scalar", "uint64_t", "the field's prime modulus, 2^61 − 1"),
        Param("out_xy", "output", doc="2n words: x0, −y0, x1, −y1, ...", element="uint64"),
        Param("n", "scalar", "size_t", "number of points"),
    )
    # n: ragged, then up to 16 Mi points (512 MB moved).
    gpu_cases = ((1000,), (100003,), (1 << 20,), (1 << 24,))
    cpu_cases = ((7,), (100,), (1001,))
    dim_names = ("n",)
    flops_formula = "2 · n (a subtraction and a reduction per point)"
    bytes_formula = "4 · n · 8 (read x and y, write both coordinates)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"xs": (n,), "ys": (n,), "out_xy": (2 * n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_prime(dims), dims[0]]

    def flops(self, dims: Dims) -> int:
        return 2 * dims[0]

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        p = case_prime(dims)
        xs, ys = residues(dims, p, gen), residues(dims, p, gen)
        # About one point in 32 has y = 0, where p − y is not reduced.
        order_two = torch.randint(0, 32, dims, generator=gen, device=gen.device) == 0
        ys = ys.masked_fill(order_two, 0)
        return xs.view(torch.uint64), ys.view(torch.uint64)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        # Values are below 2^62, so the int64 view of each word is the same number.
        xs, ys, p = args[0].view(torch.int64), args[1].view(torch.int64), args[2]
        return torch.stack((xs, (p - ys) % p), dim=1).reshape(-1).view(torch.uint64)
