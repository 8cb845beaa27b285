"""cumsum: the inclusive prefix sum of N floats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.scan._scan import InclusiveScan

if TYPE_CHECKING:
    import torch


class Cumsum(InclusiveScan):
    slug = "cumsum"
    aliases = ("prefix_sum",)
    title = "Cumulative Sum"
    description = (
        "Compute the inclusive prefix sum of N floats: `output[i] = input[0] + input[1] + ... + input[i]`. "
        "Inputs are standard normal, so the running sum wanders like a random walk of size about √N. Any "
        "order of the additions is accepted, but one float32 accumulator carried across all N elements drifts "
        "too far on the largest case: combine block sums (a parallel scan does) or carry the total in double."
    )
    tags = ("scan", "memory-bound")
    # float32 only (the scans' default): the outputs wander to about 4·√N, and a half-precision scan that
    # carries its running sums in the dtype drifts past any tolerance that still means something.
    parameters = (
        Param("input", "input", doc="N elements"),
        Param("output", "output", doc="N inclusive prefix sums"),
        Param("N", "scalar", "size_t", "number of elements"),
    )
    gpu_cases = ((100_003,), (1 << 20,), (1 << 22,), (1 << 24,))
    cpu_cases = ((1000,), (16_411,), (1 << 18,))
    flops_formula = "N − 1 (one add per element after the first)"
    bytes_formula = "2 · N · sizeof(dtype) (read the input, write the output)"
    # Default tolerances. The bound is 1e-4 of the outputs' RMS (about √(N/2)) plus 1e-4 of each value. A
    # parallel scan's rounding error grows with the number of chained block totals, not with N: torch.cumsum
    # uses about 1% of the bound. One float32 accumulator over all 2^24 elements gathers an error of about
    # 2^-24 · N / √6 ≈ 0.4 against a bound of 0.3, which is why the description warns against it.

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().cumsum(dim=0)
