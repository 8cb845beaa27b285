"""Random inputs for test cases: signed, non-degenerate, drawn from a generator so every run can be fresh."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from problems.base import TORCH_NAMES, DType, Problem, TestCase

if TYPE_CHECKING:
    import torch


def torch_dtype(dtype: DType | str) -> torch.dtype:
    """The torch dtype of a problem dtype or a buffer element type (`int32`, `uint8`, `float8_e4m3`, ...)."""
    import torch

    return getattr(torch, TORCH_NAMES[dtype])  # type: ignore[no-any-return]


def randn(shape: Sequence[int], dtype: DType, gen: torch.Generator, scale: float = 1.0) -> torch.Tensor:
    """Standard normal values (times `scale`) on the generator's device, cast to `dtype`."""
    import torch

    values = torch.randn(tuple(shape), generator=gen, device=gen.device, dtype=torch.float32)
    if scale != 1.0:
        values.mul_(scale)
    return values.to(torch_dtype(dtype))


def uniform(shape: Sequence[int], dtype: DType, gen: torch.Generator, low: float, high: float) -> torch.Tensor:
    """Uniform values in [low, high) on the generator's device, cast to `dtype`."""
    import torch

    values = torch.rand(tuple(shape), generator=gen, device=gen.device, dtype=torch.float32)
    return (values * (high - low) + low).to(torch_dtype(dtype))


def normal_case(name: str, dims: tuple[int, ...], shapes: Sequence[Sequence[int]], dtype: DType) -> TestCase:
    """A case whose inputs are independent standard-normal tensors of the given shapes."""

    def create_inputs(gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return tuple(randn(shape, dtype, gen) for shape in shapes)

    return {"name": name, "dims": dims, "create_inputs": create_inputs, "dtype": dtype}


def custom_case(
    name: str, dims: tuple[int, ...], dtype: DType, create: Callable[[torch.Generator], tuple[torch.Tensor, ...]]
) -> TestCase:
    return {"name": name, "dims": dims, "create_inputs": create, "dtype": dtype}


def pow2_name(n: int) -> str:
    """`2^20` for powers of two, else the plain number: short case names for large sizes."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def constant_arrays(problem: Problem, extras: Sequence[Any], device: str) -> list[Any]:
    """`extras` with each array parameter's list made a tensor of the parameter's element type, in the memory the
    parameter declares: on `device` for a device array, on the CPU for a host array (whose values the solution's
    host code reads, so that a device pointer there would crash it)."""
    import torch

    params = [p for p in problem.ordered_parameters() if p.is_extra]
    return [
        torch.tensor(
            list(value),
            dtype=torch_dtype(p.element_type("float32")),
            device="cpu" if p.memory == "host" else device,
        )
        if p.role == "array"
        else value
        for p, value in zip(params, extras, strict=True)
    ]
