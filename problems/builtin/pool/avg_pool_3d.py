"""avg-pool-3d: average pooling of an H×W×D volume with a cubic window; the pooling ints vary per case."""

from __future__ import annotations

from typing import ClassVar

from problems.base import DType, Tolerance
from problems.builtin.pool._pool import AvgPool, pool_signature


class AvgPool3d(AvgPool):
    slug = "avg-pool-3d"
    title = "3D Average Pooling"
    description = (
        "Average-pool a single-channel H×W×D volume `input` (row-major: D is the contiguous axis) with a "
        "`kernel_size`³ window, moved by `stride` along every axis, over the volume padded with `padding` zeros "
        "on every side. The output is H_out×W_out×D_out with `H_out = floor((H + 2·padding − kernel_size) / "
        "stride) + 1` (W_out and D_out alike); each output is the mean of the window whose first corner is "
        "`(h·stride − padding, w·stride − padding, d·stride − padding)`. Padding positions count as zeros in "
        "the sum and in the divisor (PyTorch's `count_include_pad=True`), so every output divides by "
        "`kernel_size³`. The pooling parameters differ between cases; `padding` is at most `kernel_size / 2`."
    )
    difficulty = "hard"
    ndim = 3
    parameters = pool_signature(3, dilation=False)
    # Tensara allowed 2e-4 relative (and 1e-5 absolute, below our RMS-scaled 1e-4).
    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=2e-4, atol=1e-4)}
    # (H, W, D, kernel_size, stride, padding): ragged, then the largest moves 537 MB.
    gpu_cases = (
        (17, 33, 65, 3, 1, 1),
        (128, 128, 128, 2, 2, 0),
        (127, 255, 129, 3, 2, 1),
        (512, 512, 256, 3, 1, 1),
    )
    cpu_cases = ((5, 6, 7, 3, 1, 1), (9, 16, 11, 2, 2, 1), (17, 12, 20, 3, 2, 1))
