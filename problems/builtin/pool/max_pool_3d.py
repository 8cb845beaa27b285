"""max-pool-3d: dilated max pooling of an H×W×D volume with a cubic window; the pooling ints vary per case."""

from __future__ import annotations

from problems.builtin.pool._pool import MaxPool, pool_signature


class MaxPool3d(MaxPool):
    slug = "max-pool-3d"
    title = "3D Max Pooling"
    description = (
        "Max-pool a single-channel H×W×D volume `input` (row-major: D is the contiguous axis) with a "
        "`kernel_size`³ window whose elements are `dilation` apart, moved by `stride` along every axis, over "
        "the volume padded by `padding` positions on every side. The output is H_out×W_out×D_out with `H_out "
        "= floor((H + 2·padding − dilation·(kernel_size − 1) − 1) / stride) + 1` (W_out and D_out alike); "
        "each output is the largest of the window's elements, the window's first corner being `(h·stride − "
        "padding, w·stride − padding, d·stride − padding)`. Padding positions never win (they act as −∞). "
        "Each output is one of the input values, so a right answer is exact; the check allows 3e-4 (Tensara's "
        "bound). The pooling parameters differ between cases; `padding` is at most `kernel_size / 2`."
    )
    difficulty = "hard"
    ndim = 3
    parameters = pool_signature(3, dilation=True)
    # (H, W, D, kernel_size, stride, padding, dilation): ragged, then the largest moves 537 MB.
    gpu_cases = (
        (17, 33, 65, 3, 1, 1, 1),
        (128, 128, 128, 2, 2, 0, 1),
        (127, 255, 129, 3, 2, 1, 2),
        (512, 512, 256, 3, 1, 1, 1),
    )
    cpu_cases = ((5, 6, 7, 3, 1, 1, 1), (9, 16, 11, 2, 2, 1, 2), (17, 12, 20, 3, 2, 1, 2))
