"""running-sum-1d: the sum over a centred window of odd width W at every position, zero-padded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.inputs import pow2_name
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class RunningSum1d(KernelProblem):
    slug = "running-sum-1d"
    title = "1D Running Sum"
    description = (
        "Sum a sliding window of odd width W centred on every position of an N-element signal: "
        "`output[i] = input[i - W/2] + ... + input[i + W/2]` (W/2 rounded down), where positions outside "
        "[0, N) count as zero. This is a 1-D convolution with a kernel of W ones and W/2 zeros of padding on "
        "each side. W is in the thousands on the large cases: a prefix-sum difference works, but a float32 "
        "prefix sum carried across the whole signal loses too much; accumulate it in double or by blocks."
    )
    tags = ("convolution", "scan")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("input", "input", doc="N elements"),
        Param("W", "scalar", "size_t", "window width, odd"),
        Param("output", "output", doc="N window sums"),
        Param("N", "scalar", "size_t", "number of elements"),
    )
    # (N, W): W odd, ragged N, windows from 3 to 8191.
    gpu_cases = ((100_003, 101), (1 << 20, 8191), (1 << 22, 1025), (1 << 24, 8191))
    cpu_cases = ((1000, 3), (16_411, 257), (1 << 18, 1001))
    flops_formula = "2 · N (a prefix sum, then one subtraction per output)"
    bytes_formula = "2 · N · 4 (read the input, write the output)"
    # Default tolerances: the outputs' RMS is about √W, and summing a window in float32 in any order stays far
    # inside 1e-4 of it.

    def case_name(self, dims: Dims) -> str:
        n, w = dims
        return f"N={pow2_name(n)},W={w}"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, _ = dims
        return {"input": (n,), "output": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        n, w = dims
        return [w, n]

    def flops(self, dims: Dims) -> int:
        return 2 * dims[0]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        x, w = args[0].double(), args[1]
        n, half = x.numel(), w // 2
        # prefix[i] is the sum of the first i inputs; a window is the difference of two of them.
        prefix = torch.cat([x.new_zeros(1), x.cumsum(0)])
        i = torch.arange(n, device=x.device)
        high = (i + half + 1).clamp_(max=n)
        low = (i - half).clamp_(min=0)
        return prefix[high] - prefix[low]
