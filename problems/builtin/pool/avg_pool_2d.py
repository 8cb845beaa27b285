"""avg-pool-2d: average pooling of an H×W image with a square window; the pooling ints vary per case."""

from __future__ import annotations

from problems.builtin.pool._pool import AvgPool, pool_signature


class AvgPool2d(AvgPool):
    slug = "avg-pool-2d"
    title = "2D Average Pooling"
    description = (
        "Average-pool a single-channel H×W image `input` (row-major) with a `kernel_size`×`kernel_size` window, "
        "moved by `stride` along both axes, over the image padded with `padding` zeros on every side. The "
        "output is H_out×W_out with `H_out = floor((H + 2·padding − kernel_size) / stride) + 1` (W_out alike); "
        "`output[y][x]` is the mean of the window whose top-left input position is "
        "`(y·stride − padding, x·stride − padding)`. Padding positions count as zeros in the sum and in the "
        "divisor (PyTorch's `count_include_pad=True`), so every output divides by `kernel_size²`. The pooling "
        "parameters differ between cases; `padding` is at most `kernel_size / 2`."
    )
    difficulty = "medium"
    ndim = 2
    parameters = pool_signature(2, dilation=False)
    # (H, W, kernel_size, stride, padding): ragged, then the largest moves 537 MB.
    gpu_cases = ((67, 129, 3, 1, 1), (1024, 1024, 2, 2, 0), (2047, 3001, 5, 2, 2), (8192, 8192, 3, 1, 1))
    cpu_cases = ((9, 7, 3, 1, 1), (33, 20, 4, 2, 1), (64, 97, 5, 3, 2))
