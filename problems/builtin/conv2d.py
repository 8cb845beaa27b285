"""conv2d: 2-D convolution (cross-correlation) of an NCHW batch with a C_out×C_in×KH×KW filter bank."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DEFAULT_TOLERANCES, ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase, Tolerance
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch

# (n, c_in, h, w, c_out, kh, kw), small to large in FLOPs. Kernels are odd-sized so "same" padding is exact.
GPU_DIMS = (
    (2, 3, 64, 64, 16, 5, 5),
    (1, 3, 224, 224, 64, 7, 7),
    (8, 64, 56, 56, 64, 3, 3),
    (4, 256, 28, 28, 256, 3, 3),
    (8, 64, 128, 128, 128, 3, 3),
)
CPU_DIMS = ((1, 3, 16, 16, 8, 3, 3), (2, 8, 32, 32, 16, 3, 3), (2, 16, 28, 28, 32, 5, 5))


def _output_hw(h: int, w: int, kh: int, kw: int) -> tuple[int, int]:
    """Stride 1 with (kh - 1) / 2 and (kw - 1) / 2 zero padding keeps the input's height and width."""
    return h + 2 * (kh // 2) - kh + 1, w + 2 * (kw // 2) - kw + 1


class Conv2d(Problem):
    slug = "conv2d"
    title = "2-D convolution"
    description = (
        "Convolve a batch of images with a bank of filters, as `torch.nn.functional.conv2d` does "
        "(cross-correlation, no bias), with stride 1 and zero padding of (kh-1)/2 rows and (kw-1)/2 columns, "
        "so the output has the input's height and width:\n"
        "`output_y[b][o][y][x] = sum_{c, i, j} input_x[b][c][y + i - kh/2][x + j - kw/2] * input_weight[o][c][i][j]`, "
        "with out-of-range input positions read as zero.\n"
        "Layouts: input_x is n×c_in×h×w, input_weight is c_out×c_in×kh×kw, output_y is n×c_out×h×w, "
        "all row-major (NCHW) and contiguous. kh and kw are odd.\n"
        "The float32 check admits TF32 tensor-core math (PyTorch's default for float32 convolutions on the GPU)."
    )
    tags = ("convolution", "compute-bound")
    difficulty = "hard"
    parameters = (
        Param("input_x", "input"),
        Param("input_weight", "input"),
        Param("output_y", "output"),
        Param("n", "scalar", "size_t", "batch size"),
        Param("c_in", "scalar", "size_t", "input channels"),
        Param("h", "scalar", "size_t", "image height (input and output)"),
        Param("w", "scalar", "size_t", "image width (input and output)"),
        Param("c_out", "scalar", "size_t", "output channels (filters)"),
        Param("kh", "scalar", "size_t", "filter height (odd)"),
        Param("kw", "scalar", "size_t", "filter width (odd)"),
    )
    flops_formula = (
        "2 · N · C_out · H_out · W_out · C_in · KH · KW (a multiply and an add per filter tap, "
        "taps on the zero padding included; H_out = H and W_out = W)"
    )
    bytes_formula = "(N·C_in·H·W + C_out·C_in·KH·KW + N·C_out·H_out·W_out) · sizeof(dtype)"
    # Unlike matmul, the float32 bound admits TF32 tensor-core math: PyTorch lets cuDNN use it for float32
    # convolutions by default, and on an H100 F.conv2d is then off by up to 1.9e-3 · rms on the GPU cases (15x the
    # default bound, a third of this one). Strict float32 accumulation is near 3e-6 · rms. float16 and bfloat16
    # keep the defaults, of which F.conv2d used at most 8% and 15%.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=2e-3, atol=5e-3),
    }

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        x, weight = inputs
        kh, kw = weight.shape[-2:]
        return F.conv2d(x.double(), weight.double(), padding=(kh // 2, kw // 2))

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [
            normal_case(
                f"{n}x{c_in}x{h}x{w}->{c_out} k{kh}x{kw}",
                (n, c_in, h, w, c_out, kh, kw),
                [(n, c_in, h, w), (c_out, c_in, kh, kw)],
                dtype,
            )
            for n, c_in, h, w, c_out, kh, kw in dims
        ]

    def get_flops(self, test_case: TestCase) -> int:
        n, c_in, h, w, c_out, kh, kw = test_case["dims"]
        h_out, w_out = _output_hw(h, w, kh, kw)
        return 2 * n * c_out * h_out * w_out * c_in * kh * kw

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        n, c_in, h, w, c_out, kh, kw = test_case["dims"]
        h_out, w_out = _output_hw(h, w, kh, kw)
        return (n * c_in * h * w + c_out * c_in * kh * kw + n * c_out * h_out * w_out) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return list(test_case["dims"])
