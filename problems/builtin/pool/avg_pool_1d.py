"""avg-pool-1d: average pooling of a length-H signal; kernel_size, stride and padding vary per case."""

from __future__ import annotations

from typing import ClassVar

from problems.base import DType, Tolerance
from problems.builtin.pool._pool import AvgPool, pool_signature


class AvgPool1d(AvgPool):
    slug = "avg-pool-1d"
    title = "1D Average Pooling"
    description = (
        "Average-pool a signal `input` of H floats with a window of `kernel_size` elements, moved by `stride`, "
        "over the signal padded with `padding` zeros at each end. Write `H_out = floor((H + 2·padding − "
        "kernel_size) / stride) + 1` outputs: `output[o]` is the mean of input positions `o·stride − padding` "
        "to `o·stride − padding + kernel_size − 1`. Padding positions count as zeros in the sum and in the "
        "divisor (PyTorch's `count_include_pad=True`), so every output divides by `kernel_size`. The pooling "
        "parameters differ between cases; `padding` is at most `kernel_size / 2`."
    )
    difficulty = "easy"
    ndim = 1
    parameters = pool_signature(1, dilation=False)
    # Tensara allowed 5e-3 relative and 2e-4 absolute on windows of values in [-1, 1] (outputs of RMS about 0.3):
    # the absolute term is about 7e-4 of that RMS.
    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=5e-3, atol=1e-3)}
    # (H, kernel_size, stride, padding): a stride larger than the window in one, the largest moves 268 MB.
    gpu_cases = ((10_007, 3, 1, 1), (1_048_576, 2, 3, 1), (5_000_011, 7, 3, 3), (33_554_432, 5, 1, 2))
    cpu_cases = ((17, 3, 1, 1), (100, 4, 2, 2), (257, 5, 3, 1))
