"""grayscale: interleaved RGB pixels to luma with the BT.601 weights."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.graphics._image import pixels
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

CHANNELS = 3
WEIGHTS = (0.299, 0.587, 0.114)


class Grayscale(KernelProblem):
    slug = "grayscale"
    title = "Grayscale Conversion"
    description = (
        "Convert a height×width colour image to grayscale. `rgb_image` holds the pixels row by row, each pixel's "
        "`channels` values (red, green, blue; `channels` is 3 in every case) next to one another, values in "
        "[0, 1). Write `grayscale_output[y][x] = 0.299·R + 0.587·G + 0.114·B` (the ITU-R BT.601 luma weights), "
        "a height×width row-major image."
    )
    tags = ("graphics", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("rgb_image", "input", doc="height×width×channels, interleaved, row-major"),
        Param("grayscale_output", "output", doc="height×width, row-major"),
        Param("height", "scalar", "size_t", "rows"),
        Param("width", "scalar", "size_t", "columns"),
        Param("channels", "scalar", "size_t", "values per pixel (3)"),
    )
    # (height, width): ragged, full HD, ragged, then an 8K frame (531 MB moved).
    gpu_cases = ((67, 129), (1080, 1920), (2161, 3847), (4320, 7680))
    cpu_cases = ((5, 7), (33, 20), (64, 97))
    dim_names = ("height", "width")
    flops_formula = "5 · height · width (three multiplies and two adds per pixel)"
    bytes_formula = "(channels + 1) · height · width · sizeof(float)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        h, w = dims
        return {"rgb_image": (h, w, CHANNELS), "grayscale_output": (h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        return [*dims, CHANNELS]

    def flops(self, dims: Dims) -> int:
        h, w = dims
        return 5 * h * w

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        h, w = dims
        return (pixels((h, w, CHANNELS), gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        rgb = args[0].double()
        weights = torch.tensor(WEIGHTS, dtype=torch.float64, device=rgb.device)
        return rgb[..., :3] @ weights
