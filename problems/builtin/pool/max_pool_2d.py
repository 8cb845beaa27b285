"""max-pool-2d: dilated max pooling of an H×W image with a square window; the pooling ints vary per case."""

from __future__ import annotations

from problems.builtin.pool._pool import MaxPool, pool_signature


class MaxPool2d(MaxPool):
    slug = "max-pool-2d"
    title = "2D Max Pooling"
    description = (
        "Max-pool a single-channel H×W image `input` (row-major) with a `kernel_size`×`kernel_size` window "
        "whose elements are `dilation` apart, moved by `stride` along both axes, over the image padded by "
        "`padding` positions on every side. The output is H_out×W_out with `H_out = floor((H + 2·padding − "
        "dilation·(kernel_size − 1) − 1) / stride) + 1` (W_out alike); `output[y][x]` is the largest of "
        "`input[y·stride − padding + i·dilation][x·stride − padding + j·dilation]`, i, j < kernel_size. "
        "Padding positions never win (they act as −∞). Each output is one of the input values, so a right "
        "answer is exact; the check allows 3e-4 (Tensara's bound). The pooling parameters differ between "
        "cases; `padding` is at most `kernel_size / 2`."
    )
    difficulty = "medium"
    ndim = 2
    parameters = pool_signature(2, dilation=True)
    # (H, W, kernel_size, stride, padding, dilation): ragged, then the largest moves 537 MB.
    gpu_cases = ((67, 129, 3, 1, 1, 1), (1024, 1024, 2, 2, 0, 1), (2047, 3001, 3, 2, 1, 2), (8192, 8192, 3, 1, 1, 1))
    cpu_cases = ((9, 7, 3, 1, 1, 1), (33, 20, 2, 2, 1, 2), (64, 97, 3, 2, 1, 2))
