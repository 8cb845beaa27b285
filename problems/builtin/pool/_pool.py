"""The pooling family's shared rules: one channel, a square (cubic) window, PyTorch's output-size rule.

A case is `(*spatial sizes, kernel_size, stride, padding)`, plus `dilation` for max pooling: the pooling
parameters are part of each case, so no single constant passes them all. Along each axis of length L the output
has `floor((L + 2·padding − dilation·(kernel_size − 1) − 1) / stride) + 1` positions (dilation 1 for average
pooling), window `o` starting at input position `o·stride − padding` (PyTorch's rule, `ceil_mode=False`).
Padding is at most half the window, as PyTorch requires, so every window holds at least one real element.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, TimeFloor, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

AXES = ("H", "W", "D")
# A max is one of the input values, so a right answer is exact; the bound still accepts what Tensara's check did
# (max-pool-1d: 3e-4 relative and absolute on values in [-5, 5]; max-pool-2d 1e-5; max-pool-3d 1e-4 relative).
MAX_TOLERANCES: dict[DType, Tolerance] = {"float32": Tolerance(rtol=3e-4, atol=3e-4)}


def pool_signature(ndim: int, dilation: bool) -> tuple[Param, ...]:
    """Tensara's pooling signature: the pooling ints before the output pointer, the sizes after it."""
    axes = AXES[:ndim]
    shape = "×".join(axes)
    params = [
        Param("input", "input", doc=f"{shape}, row-major"),
        Param("kernel_size", "scalar", "int", "window edge"),
        Param("stride", "scalar", "int", "step between windows"),
        Param("padding", "scalar", "int", "implicit padding on each side, at most kernel_size / 2"),
    ]
    if dilation:
        params.append(Param("dilation", "scalar", "int", "step between the window's elements"))
    params.append(Param("output", "output", doc=f"{'×'.join(a + '_out' for a in axes)}, row-major"))
    params += [Param(a, "scalar", "size_t", f"input size along axis {i}") for i, a in enumerate(axes)]
    return tuple(params)


class Pool(KernelProblem):
    """Pooling of one `ndim`-dimensional channel; `dilation` says whether the case carries a dilation."""


    tags: ClassVar[tuple[str, ...]] = ("pooling", "memory-bound")
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    ndim: ClassVar[int]
    dilated: ClassVar[bool] = False
    bytes_formula = "(input elements + output elements) · sizeof(float)"
    time_floor = TimeFloor(read_share=0.0, why="A stride or dilation past the window skips inputs no output reads.")

    def holdout_valid(self, dims: Dims) -> bool:
        """torch's rule: padding at most half the window, and every padded size holds one window."""
        _, pool = self.split(dims)
        k, s, p = pool[:3]
        return k >= 1 and s >= 1 and p <= k // 2 and all(n + 2 * p >= k for n in dims[: self.ndim])

    def split(self, dims: Dims) -> tuple[tuple[int, ...], list[int]]:
        """The spatial sizes and the pooling ints (kernel_size, stride, padding[, dilation]) of a case."""
        return tuple(dims[: self.ndim]), list(dims[self.ndim :])

    def output_sizes(self, dims: Dims) -> tuple[int, ...]:
        sizes, pool = self.split(dims)
        k, s, p = pool[:3]
        d = pool[3] if self.dilated else 1
        return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n in sizes)

    def case_name(self, dims: Dims) -> str:
        sizes, pool = self.split(dims)
        names = ("k", "s", "p", "d")
        return "x".join(map(str, sizes)) + "," + ",".join(f"{n}={v}" for n, v in zip(names, pool, strict=False))

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        sizes, _ = self.split(dims)
        return {"input": sizes, "output": self.output_sizes(dims)}

    def extras(self, dims: Dims) -> list[Any]:
        sizes, pool = self.split(dims)
        return [*pool, *sizes]

    def window(self, dims: Dims) -> int:
        return int(dims[self.ndim]) ** self.ndim

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x = args[0].double()[None, None]
        return self.pool(x, *args[1:]).squeeze(0).squeeze(0)

    def pool(self, x: torch.Tensor, *params: int) -> torch.Tensor:
        raise NotImplementedError


class AvgPool(Pool):
    """Average pooling: the window's sum divided by kernel_size^ndim, padding zeros included."""

    flops_formula = "outputs · kernel_size^ndim (the window's adds and the division)"

    def flops(self, dims: Dims) -> int:
        return math.prod(self.output_sizes(dims)) * self.window(dims)

    def pool(self, x: torch.Tensor, *params: int) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        k, s, p = params[:3]
        fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[self.ndim]
        return fn(x, k, s, p)  # count_include_pad=True, ceil_mode=False: PyTorch's defaults


class MaxPool(Pool):
    """Max pooling with dilation: padding never wins."""

    dilated = True
    tolerances = MAX_TOLERANCES
    flops_formula = "outputs · (kernel_size^ndim − 1) (one compare per window element after the first)"

    def flops(self, dims: Dims) -> int:
        return math.prod(self.output_sizes(dims)) * (self.window(dims) - 1)

    def pool(self, x: torch.Tensor, *params: int) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        k, s, p, d = params[:4]
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[self.ndim]
        return fn(x, k, s, p, dilation=d)
