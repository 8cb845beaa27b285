"""threshold: 255 where a pixel is strictly above the threshold, else 0; checked exactly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.builtin.graphics._image import CPU_HW, GPU_HW, pixels
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


# Tensara's images hold 8-bit intensities as floats, and a pixel above the threshold becomes white (255).
WHITE = 255.0


def case_threshold(dims: Dims) -> float:
    """A threshold from 1/8 to 7/8 of 255 set by the case's sizes: exact in float32, so the comparison is too."""
    h, w = dims
    return WHITE * (1 + (h + w) % 7) / 8


class Threshold(KernelProblem):
    slug = "threshold"
    # Version 1 wrote 1.0 above the threshold; Tensara writes 255.0.
    version = 2
    title = "Image Thresholding"
    description = (
        "Binarise a single-channel height×width image (row-major, intensities in [0, 255)): "
        "`output_image[y][x] = 255.0` where `input_image[y][x] > threshold_value` (strictly), else `0.0`. "
        "`threshold_value` differs between cases, and about one pixel in a hundred equals it exactly (those "
        "write 0). The output is checked exactly."
    )
    tags = ("graphics", "elementwise", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("input_image", "input", doc="height×width, row-major"),
        Param("threshold_value", "scalar", "float", "the cut: strictly greater pixels become 255"),
        Param("output_image", "output", doc="height×width, row-major, 0.0 or 255.0"),
        Param("height", "scalar", "size_t", "rows"),
        Param("width", "scalar", "size_t", "columns"),
    )
    gpu_cases = GPU_HW
    cpu_cases = CPU_HW
    dim_names = ("height", "width")
    flops_formula = "height · width (one compare per pixel)"
    bytes_formula = "2 · height · width · sizeof(float)"
    # Each output is 0 or 255 from one exact float32 compare: any difference is a wrong answer.
    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=0.0, atol=0.0)}

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input_image": dims, "output_image": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_threshold(dims), *dims]

    def flops(self, dims: Dims) -> int:
        h, w = dims
        return h * w

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        image = pixels(dims, gen).mul_(WHITE)
        # Pixels equal to the threshold tell `>` from `>=`.
        ties = torch.rand(dims, generator=gen, device=gen.device) < 0.01
        return (image.masked_fill(ties, case_threshold(dims)),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        image, threshold = args[0], args[1]
        return (image.double() > threshold).double() * WHITE
