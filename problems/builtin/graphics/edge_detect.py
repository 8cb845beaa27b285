"""edge-detect: the central-difference gradient magnitude of each interior pixel, scaled so that the strongest
edge is 255; border pixels are zero."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.builtin.graphics._image import CPU_HW, GPU_HW, pixels
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class EdgeDetect(KernelProblem):
    slug = "edge-detect"
    # Version 1 asked for the unscaled Sobel magnitude; Tensara's reference is the central difference, scaled to 255.
    version = 2
    title = "Edge Detection"
    description = (
        "Compute the edge strength of a single-channel height×width image (row-major, values in [0, 1)). For "
        "every interior pixel (1 <= y <= height-2, 1 <= x <= width-2), with `p[i][j]` the input, take the "
        "central differences `gx = (p[y][x+1] - p[y][x-1]) / 2` and `gy = (p[y+1][x] - p[y-1][x]) / 2` and the "
        "magnitude `g[y][x] = sqrt(gx² + gy²)`; pixels on the border (first and last row and column) have "
        "`g = 0`. Then scale: `output_image[y][x] = g[y][x] / max(g) * 255`, so the strongest edge is 255 "
        "(a kernel needs the image-wide maximum before it writes). If every `g` is 0, write 0."
    )
    tags = ("graphics", "stencil")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("input_image", "input", doc="height×width, row-major"),
        Param("output_image", "output", doc="height×width, row-major"),
        Param("height", "scalar", "size_t", "rows"),
        Param("width", "scalar", "size_t", "columns"),
    )
    gpu_cases = GPU_HW
    cpu_cases = CPU_HW
    dim_names = ("height", "width")
    flops_formula = "10 · (height − 2) · (width − 2) (two differences, two halvings, two squares, a sum, a root)"
    bytes_formula = "2 · height · width · sizeof(float)"
    # Tensara allowed a relative error of 1e-3: the scale by 255 / max(g) amplifies the magnitude's rounding.
    tolerances: ClassVar[dict[DType, Tolerance]] = {"float32": Tolerance(rtol=1e-3, atol=1e-3)}

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input_image": dims, "output_image": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        h, w = dims
        return 10 * (h - 2) * (w - 2)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (pixels(dims, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        p = args[0].double()
        h, w = p.shape

        def at(dy: int, dx: int) -> torch.Tensor:
            """The interior's neighbours at offset (dy, dx)."""
            return p[1 + dy : h - 1 + dy, 1 + dx : w - 1 + dx]

        gx = (at(0, 1) - at(0, -1)) / 2
        gy = (at(1, 0) - at(-1, 0)) / 2
        out = torch.zeros_like(p)
        out[1 : h - 1, 1 : w - 1] = torch.sqrt(gx * gx + gy * gy)
        strongest = float(out.max()) if out.numel() else 0.0
        if strongest > 0:
            out.mul_(255.0 / strongest)
        return out
