"""max-pool-1d: dilated max pooling of a length-H signal; the pooling ints vary per case."""

from __future__ import annotations

from problems.builtin.pool._pool import MaxPool, pool_signature


class MaxPool1d(MaxPool):
    slug = "max-pool-1d"
    title = "1D Max Pooling"
    description = (
        "Max-pool a signal `input` of H floats with a window of `kernel_size` elements spaced `dilation` "
        "apart, moved by `stride`, over the signal padded by `padding` positions at each end. Write `H_out = "
        "floor((H + 2·padding − dilation·(kernel_size − 1) − 1) / stride) + 1` outputs: `output[o]` is the "
        "largest of the input positions `o·stride − padding + j·dilation`, j = 0..kernel_size−1. Padding "
        "positions never win (they act as −∞). Each output is one of the input values, so it is exact; the "
        "check allows 3e-4 (Tensara's bound). The pooling parameters differ between cases; `padding` is at "
        "most `kernel_size / 2`."
    )
    difficulty = "easy"
    ndim = 1
    parameters = pool_signature(1, dilation=True)
    # (H, kernel_size, stride, padding, dilation): the largest moves 268 MB.
    gpu_cases = ((10_007, 3, 1, 1, 1), (1_048_576, 2, 2, 0, 1), (5_000_011, 5, 2, 2, 3), (33_554_432, 3, 1, 1, 2))
    cpu_cases = ((17, 3, 1, 1, 1), (100, 4, 2, 2, 2), (257, 3, 2, 1, 3))
