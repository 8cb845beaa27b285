"""conv-1d: a length-N signal correlated with an odd length-K kernel, 'same' zero padding, N outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.conv._conv import TENSARA_CONV_TOLERANCES, TF32_NOTE, same_correlation
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class Conv1d(KernelProblem):
    slug = "conv-1d"
    title = "1D Convolution"
    description = (
        "Slide a kernel `B` of K floats (K odd) along a signal `A` of N floats and write N outputs to `C`. The "
        "kernel's middle tap sits on the output's position: `C[i] = sum_{j=0..K-1} A[i + j - (K-1)/2] * B[j]`, "
        "where positions of `A` before 0 or past N-1 count as zero (so the first and last (K-1)/2 outputs see "
        "part of the kernel over the zero padding). The kernel is not flipped (cross-correlation, as in deep "
        "learning). N is not a multiple of any block size." + TF32_NOTE
    )
    tags = ("convolution",)
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("A", "input", doc="the signal, N floats"),
        Param("B", "input", doc="the kernel, K floats (K odd)"),
        Param("C", "output", doc="N floats"),
        Param("N", "scalar", "size_t", "signal and output length"),
        Param("K", "scalar", "size_t", "kernel length (odd)"),
    )
    # (N, K): ragged lengths and kernels from 3 to 127 taps; the largest moves 128 MB and does 4 GFLOP.
    gpu_cases = ((100_003, 7), (1_048_576, 31), (4_000_037, 63), (16_777_216, 127))
    cpu_cases = ((17, 3), (1000, 9), (4099, 31))
    dim_names = ("N", "K")
    flops_formula = "N · (2K − 1) (K multiplies and K − 1 adds per output, taps on the padding included)"
    bytes_formula = "(2N + K) · sizeof(float)"
    tolerances = TENSARA_CONV_TOLERANCES

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, k = dims
        return {"A": (n,), "B": (k,), "C": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, k = dims
        return n * (2 * k - 1)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return same_correlation(args[0], args[1])
