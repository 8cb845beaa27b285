"""cumprod: the inclusive prefix product of N floats near ±1."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.builtin.scan._scan import InclusiveScan
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Cumprod(InclusiveScan):
    slug = "cumprod"
    title = "Cumulative Product"
    description = (
        "Compute the inclusive prefix product of N floats: `output[i] = input[0] · input[1] · ... · input[i]`. "
        "Each input is `±exp(z)` with a random sign and z normal of standard deviation 1/√N, so the running "
        "product wanders between about e^-3 and e^3 in magnitude instead of overflowing or vanishing, and its "
        "sign flips at every negative factor. Carry the products in double: every multiplication's rounding "
        "reaches the later outputs, and float32 products of millions of factors this close to 1 drift by "
        "percents (torch.cumprod in float32 on an H100 is 5% off at N = 2^24). The order is free."
    )
    tags = ("scan",)
    parameters = (
        Param("input", "input", doc="N elements"),
        Param("output", "output", doc="N inclusive prefix products"),
        Param("N", "scalar", "size_t", "number of elements"),
    )
    gpu_cases = ((100_003,), (1 << 20,), (1 << 22,), (1 << 24,))
    cpu_cases = ((1000,), (16_411,), (1 << 18,))
    flops_formula = "N − 1 (one multiply per element after the first)"
    bytes_formula = "2 · N · sizeof(dtype) (read the input, write the output)"
    # Each product is relative-checked at 1e-3, Tensara's rtol (plus 1e-4 of the outputs' RMS: Tensara's absolute
    # 1e-2 exceeds its own products, which decay towards zero, so it accepted zeros there; ours does not). Every
    # multiply's rounding error reaches all later outputs whatever the scan's shape, and for these factors the
    # float32 errors add up instead of cancelling: measured on an H100, float32 scans (torch.cumprod, a tiled scan)
    # are off by 8e-6, 4e-4, 4e-3 and 5e-2 relative on the four GPU cases, growing as N. Carried in double (as
    # torch.cumprod on the CPU does) the only error left is the final rounding to float32, 6e-8.

    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=1e-3, atol=1e-4)}

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        (n,) = dims
        z = torch.randn(n, generator=gen, device=gen.device).mul_(1.0 / math.sqrt(n))
        sign = torch.randint(0, 2, (n,), generator=gen, device=gen.device).mul_(2).sub_(1)
        return (z.exp_().mul_(sign),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().cumprod(dim=0)
