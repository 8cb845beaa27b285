"""scan-large: the inclusive prefix sum of up to 180 million int32 values, exact."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.scan._scan import InclusiveScan
from problems.library import Dims

if TYPE_CHECKING:
    import torch

# Inputs are uniform in [-LIMIT, LIMIT]: the running sums stay within a few times LIMIT·√n, far from 2^31.
LIMIT = 1000


class ScanLarge(InclusiveScan):
    slug = "scan-large"
    title = "Large Integer Prefix Sum"
    description = (
        "Compute the inclusive prefix sum of n int32 values: `output[i] = input[0] + ... + input[i]`, exactly. "
        f"Values are uniform in [-{LIMIT}, {LIMIT}], so no prefix overflows int32. The largest case has 180 "
        "million values (1.44 GB read and written), so the scan is bound by memory: reading the input once (a "
        "single-pass scan with decoupled look-back) instead of twice (reduce, then scan) is most of the speed. "
        "Results are checked exactly."
    )
    tags = ("scan", "memory-bound")
    difficulty = "hard"
    size_name = "n"
    score_metric = "gbps"
    parameters = (
        Param("input", "input", doc="n values", element="int32"),
        Param("output", "output", doc="n inclusive prefix sums", element="int32"),
        Param("n", "scalar", "size_t", "number of values"),
    )
    gpu_cases = ((1 << 20,), (16_777_259,), (1 << 26,), (180_000_000,))
    cpu_cases = ((1000,), (16_411,), (1 << 18,))
    flops_formula = "n − 1 (integer adds; scored in GB/s)"
    bytes_formula = "8 · n (read the input, write the output)"

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        return (torch.randint(-LIMIT, LIMIT + 1, dims, generator=gen, device=gen.device, dtype=torch.int32),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        return args[0].cumsum(0, dtype=torch.int64).to(torch.int32)
