"""conv2d-nchw: a batch of multi-channel NCHW images correlated with a C_out×C_in×KH×KW filter bank."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.conv._conv import CONV_TOLERANCES, TF32_NOTE
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class Conv2dNchw(KernelProblem):
    slug = "conv2d-nchw"
    title = "2D Convolution, NCHW Batch"
    description = (
        "Convolve a batch of images with a bank of filters, as `torch.nn.functional.conv2d` does "
        "(cross-correlation, no bias), with stride 1 and zero padding of (kh-1)/2 rows and (kw-1)/2 columns, "
        "so the output has the input's height and width:\n"
        "`output_y[b][o][y][x] = sum_{c, i, j} input_x[b][c][y + i - (kh-1)/2][x + j - (kw-1)/2] * "
        "input_weight[o][c][i][j]`, with out-of-range input positions read as zero.\n"
        "Layouts: input_x is n×c_in×h×w, input_weight is c_out×c_in×kh×kw, output_y is n×c_out×h×w, "
        "all row-major (NCHW) and contiguous. kh and kw are odd." + TF32_NOTE
    )
    tags = ("convolution", "compute-bound")
    difficulty = "hard"
    parameters = (
        Param("input_x", "input", doc="n×c_in×h×w"),
        Param("input_weight", "input", doc="c_out×c_in×kh×kw"),
        Param("output_y", "output", doc="n×c_out×h×w"),
        Param("n", "scalar", "size_t", "batch size"),
        Param("c_in", "scalar", "size_t", "input channels"),
        Param("h", "scalar", "size_t", "image height (input and output)"),
        Param("w", "scalar", "size_t", "image width (input and output)"),
        Param("c_out", "scalar", "size_t", "output channels (filters)"),
        Param("kh", "scalar", "size_t", "filter height (odd)"),
        Param("kw", "scalar", "size_t", "filter width (odd)"),
    )
    # (n, c_in, h, w, c_out, kh, kw), small to large in FLOPs; the first is ragged with a non-square kernel.
    gpu_cases = (
        (2, 3, 67, 61, 16, 5, 3),
        (1, 3, 224, 224, 64, 7, 7),
        (8, 64, 56, 56, 64, 3, 3),
        (4, 256, 28, 28, 256, 3, 3),
        (8, 64, 128, 128, 128, 3, 3),
    )
    cpu_cases = ((1, 3, 16, 16, 8, 3, 3), (2, 8, 31, 29, 16, 3, 5), (2, 16, 28, 28, 32, 5, 5))
    flops_formula = (
        "2 · N · C_out · H · W · C_in · KH · KW (a multiply and an add per filter tap, taps on the zero padding "
        "included)"
    )
    bytes_formula = "(N·C_in·H·W + C_out·C_in·KH·KW + N·C_out·H·W) · sizeof(dtype)"
    tolerances = CONV_TOLERANCES

    def case_name(self, dims: Dims) -> str:
        n, c_in, h, w, c_out, kh, kw = dims
        return f"{n}x{c_in}x{h}x{w}->{c_out} k{kh}x{kw}"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, c_in, h, w, c_out, kh, kw = dims
        return {"input_x": (n, c_in, h, w), "input_weight": (c_out, c_in, kh, kw), "output_y": (n, c_out, h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, c_in, h, w, c_out, kh, kw = dims
        return 2 * n * c_out * h * w * c_in * kh * kw

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        x, weight = args[0], args[1]
        kh, kw = weight.shape[-2:]
        return F.conv2d(x.double(), weight.double(), padding=(kh // 2, kw // 2))
