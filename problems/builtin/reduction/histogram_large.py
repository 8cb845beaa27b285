"""histogram-large: exact int32 counts of 2^28 int32 bin indices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.reduction._counts import peaked_bins
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class HistogramLarge(KernelProblem):
    slug = "histogram-large"
    title = "Large Integer Histogram"
    description = (
        "Count n int32 values, each in [0, num_bins), into `num_bins` int32 counters: `counts[b]` is the "
        "number of i with `input[i] == b`. The largest case has 2^28 values (1 GiB). Half the values crowd a "
        "narrow peak of bins, so naive global atomics contend; the number of bins runs from 100 to 4099, "
        "so a per-block copy of the counters may or may not fit shared memory. Counts are checked exactly."
    )
    tags = ("statistics", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32",)
    score_metric = "gbps"
    parameters = (
        Param("input", "input", doc="n bin indices", element="int32"),
        Param("counts", "output", doc="num_bins counts", element="int32"),
        Param("n", "scalar", "size_t", "number of values"),
        Param("num_bins", "scalar", "size_t", "number of bins"),
    )
    gpu_cases = ((1_000_003, 100), (1 << 24, 256), (1 << 26, 4099), (1 << 28, 1024))
    cpu_cases = ((1000, 10), (10_007, 256), (100_003, 1000))
    dim_names = ("n", "bins")
    flops_formula = "n (one integer increment per value; scored in GB/s)"
    bytes_formula = "4 · (n + num_bins) (read the values, write the counts)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, bins = dims
        return {"input": (n,), "counts": (bins,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return dims[0]

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        n, bins = dims
        return (peaked_bins(n, bins, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        values, bins = args[0], args[2]
        return torch.bincount(values, minlength=bins).to(torch.int32)
