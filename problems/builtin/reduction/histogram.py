"""histogram: counts of an image's pixel values in num_bins unit-wide bins, as exact float32 counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.builtin.reduction._counts import peaked_bins
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class Histogram(KernelProblem):
    slug = "histogram"
    title = "Image Histogram"
    description = (
        "Count the pixels of a height×width float image into `num_bins` bins. Pixel values lie in "
        "[0, num_bins); pixel v goes to bin `floor(v)` (for these values the same as `(int)v`). Write each "
        "bin's count as a float to `histogram` (`num_bins` of them). Half the pixels crowd a few neighbouring "
        "bins, so many threads update the same bin at once. Counts are checked exactly."
    )
    tags = ("graphics", "statistics", "reduction")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("image", "input", doc="height×width, row-major, values in [0, num_bins)"),
        Param("num_bins", "scalar", "int", "number of bins"),
        Param("histogram", "output", doc="num_bins counts"),
        Param("height", "scalar", "size_t", "image rows"),
        Param("width", "scalar", "size_t", "image columns"),
    )
    # (height, width, num_bins): every count stays far below 2^24, so float32 holds it exactly.
    gpu_cases = ((1000, 1003, 100), (1080, 1920, 64), (2160, 3840, 256), (7001, 8191, 200))
    cpu_cases = ((7, 33, 10), (64, 100, 64), (129, 257, 255))
    dim_names = ("height", "width", "bins")
    flops_formula = "4 · height · width (per pixel: read, two clamps, one increment)"
    bytes_formula = "(height · width + num_bins) · 4 (read the image, write the counts)"
    # Counts are whole numbers below 2^24: any correct float32 count is exact, so nothing else is accepted.
    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=0.0, atol=0.0)}

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        height, width, bins = dims
        return {"image": (height, width), "histogram": (bins,)}

    def extras(self, dims: Dims) -> list[Any]:
        height, width, bins = dims
        return [bins, height, width]

    def flops(self, dims: Dims) -> int:
        height, width, _ = dims
        return 4 * height * width

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        height, width, bins = dims
        whole = peaked_bins(height * width, bins, gen).float()
        # A fraction in [0.02, 0.98) keeps each value inside its bin after rounding to float32.
        fraction = torch.rand(height * width, generator=gen, device=gen.device).mul_(0.96).add_(0.02)
        return (whole.add_(fraction).reshape(height, width),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        image, bins = args[0], args[1]
        index = image.floor().long().clamp_(0, bins - 1).reshape(-1)
        return torch.bincount(index, minlength=bins).double()
