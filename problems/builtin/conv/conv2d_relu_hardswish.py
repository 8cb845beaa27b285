"""conv2d-relu-hardswish: conv-2d's 'same' correlation followed by ReLU and then HardSwish, fused."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.builtin.conv._conv import TENSARA_CONV_TOLERANCES, TF32_NOTE, same_correlation
from problems.builtin.conv.conv_2d import CPU_CASES
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class Conv2dReluHardswish(KernelProblem):
    slug = "conv2d-relu-hardswish"
    title = "2D Convolution with ReLU and HardSwish"
    description = (
        "Correlate a single-channel H×W `image` with a Kh×Kw `kernel` (Kh and Kw odd) exactly as in conv-2d "
        "('same' zero padding, stride 1, kernel not flipped), then apply ReLU and then HardSwish to each result "
        "and write the H×W `output`: with `c` the correlation, `r = max(c, 0)` and "
        "`output = r * min(max(r + 3, 0), 6) / 6`. The kernel is scaled so that results fall on both sides of "
        "HardSwish's bend at 3. All arrays are row-major and contiguous." + TF32_NOTE
    )
    tags = ("convolution", "activation-function", "fused")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("image", "input", doc="H×W, row-major"),
        Param("kernel", "input", doc="Kh×Kw, row-major"),
        Param("output", "output", doc="H×W, row-major"),
        Param("H", "scalar", "size_t", "image height"),
        Param("W", "scalar", "size_t", "image width"),
        Param("Kh", "scalar", "size_t", "kernel height (odd)"),
        Param("Kw", "scalar", "size_t", "kernel width (odd)"),
    )
    gpu_cases = ((479, 1023, 5, 3), (1024, 1024, 7, 7), (2047, 3001, 5, 9), (4096, 4096, 11, 11))
    cpu_cases = CPU_CASES
    dim_names = ("H", "W", "Kh", "Kw")
    flops_formula = "2 · H · W · Kh · Kw + 5 · H · W (the correlation, then ReLU and HardSwish per pixel)"
    bytes_formula = "(2 · H · W + Kh · Kw) · sizeof(float)"
    # Tensara: 1e-2 absolute on outputs of RMS 0.56 (its 512² image, 3×3 kernel, uniform [-1, 1]).
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **TENSARA_CONV_TOLERANCES,
        "float32": Tolerance(rtol=3e-3, atol=2e-2),
    }

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        h, w, kh, kw = dims
        return {"image": (h, w), "kernel": (kh, kw), "output": (h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        h, w, kh, kw = dims
        return 2 * h * w * kh * kw + 5 * h * w

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        h, w, kh, kw = dims
        # Taps of standard deviation 2/sqrt(Kh·Kw) give correlations of standard deviation about 2: most of
        # the positive ones fall in HardSwish's curved part (0 to 3), the rest in its linear part.
        return randn((h, w), dtype, gen), randn((kh, kw), dtype, gen, scale=2.0 / (kh * kw) ** 0.5)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        r = same_correlation(args[0], args[1]).clamp_min(0.0)
        return r * (r + 3.0).clamp(0.0, 6.0) / 6.0
