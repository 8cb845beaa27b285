"""box-blur: each pixel replaced by the mean of the k×k window around it, the window clipped at the borders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.graphics._image import pixels
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class BoxBlur(KernelProblem):
    slug = "box-blur"
    title = "Box Blur"
    description = (
        "Blur a single-channel height×width image (row-major, values in [0, 1)) with a `kernel_size`×"
        "`kernel_size` box filter, `kernel_size` odd: `output_image[y][x]` is the mean of the input pixels "
        "`[y + i][x + j]` for -r <= i, j <= r, r = (kernel_size - 1) / 2, that lie inside the image. Near the "
        "borders the window is clipped: the mean is over the pixels that exist (divide by their count, not by "
        "kernel_size²). `kernel_size` differs between cases."
    )
    tags = ("graphics", "convolution")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("input_image", "input", doc="height×width, row-major"),
        Param("kernel_size", "scalar", "int", "window edge (odd)"),
        Param("output_image", "output", doc="height×width, row-major"),
        Param("height", "scalar", "size_t", "rows"),
        Param("width", "scalar", "size_t", "columns"),
    )
    # (height, width, kernel_size): the largest does 3.8 GFLOP over 134 MB.
    gpu_cases = ((67, 129, 3), (1080, 1920, 5), (2001, 3003, 9), (4096, 4096, 15))
    cpu_cases = ((7, 9, 3), (33, 20, 5), (64, 97, 7))
    dim_names = ("height", "width", "kernel_size")
    flops_formula = "height · width · kernel_size² (the window's adds and the division, counted for a full window)"
    bytes_formula = "2 · height · width · sizeof(float)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        h, w, _ = dims
        return {"input_image": (h, w), "output_image": (h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        h, w, k = dims
        return [k, h, w]

    def flops(self, dims: Dims) -> int:
        h, w, k = dims
        return h * w * k * k

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        h, w, _ = dims
        return (pixels((h, w), gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        image, k = args[0].double(), args[1]
        return F.avg_pool2d(image[None, None], k, stride=1, padding=k // 2, count_include_pad=False)[0, 0]
