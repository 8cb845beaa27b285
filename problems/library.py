"""The declarative form of a problem: what the library's problems state, and what this base derives from it.

A `KernelProblem` states its parameters, its cases as tuples of sizes (`gpu_cases`, `cpu_cases`), the shape of
each buffer for a case, the extra values for a case, its FLOP count and its reference. Test cases, fresh inputs,
byte counts, extra parameters and the shapes shown to competitors all follow from those.

The reference receives every non-output argument in ABI order (`reference_arguments = "all"`): the input
tensors, and the scalars and constant arrays (as lists) where the signature puts them.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Problem, TestCase

if TYPE_CHECKING:
    import torch

Dims = tuple[int, ...]


class KernelProblem(Problem):
    """A problem stated by its sizes; subclasses give shapes, extras, FLOPs and the reference."""

    reference_arguments = "all"
    # Sizes of each case, small to large. Every problem has a ragged case (sizes off the multiples of 32, 64
    # and 128, non-square) so that kernels assuming nice shapes fail.
    gpu_cases: ClassVar[tuple[Dims, ...]]
    cpu_cases: ClassVar[tuple[Dims, ...]]
    # Names of the sizes in a case, for case names and tables (`("m", "n", "k")`).
    dim_names: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        """The shape of every input and output buffer, by parameter name."""

    @abstractmethod
    def extras(self, dims: Dims) -> list[Any]:
        """The values of the scalar and array parameters, in ABI order."""

    @abstractmethod
    def flops(self, dims: Dims) -> int:
        """Floating-point (or integer) operations of one call, as `flops_formula` states."""

    # -- overridable defaults ------------------------------------------------------------------------------

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        """Fresh inputs for one call set: standard normal values in each input's element type."""
        from problems.inputs import randn

        shapes = self.shapes(dims)
        return tuple(randn(shapes[p.name], p.element_type(dtype), gen) for p in self.input_params())  # type: ignore[arg-type]

    def moved_bytes(self, dims: Dims, dtype: DType) -> int:
        """Bytes of every input and output buffer: each read or written once."""
        shapes = self.shapes(dims)
        return sum(
            math.prod(shapes[p.name]) * ELEMENT_BYTES[p.element_type(dtype)]
            for p in self.parameters
            if p.role in ("input", "output")
        )

    def case_name(self, dims: Dims) -> str:
        if self.dim_names and len(self.dim_names) == len(dims):
            return ",".join(f"{name}={value}" for name, value in zip(self.dim_names, dims, strict=True))
        return "x".join(str(d) for d in dims)

    # -- derived --------------------------------------------------------------------------------------------

    def input_params(self) -> list[Any]:
        return [p for p in self.parameters if p.role == "input"]

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        cases = self.gpu_cases if device_kind == "gpu" else self.cpu_cases
        return [self._case(tuple(dims), dtype) for dims in cases]

    def _case(self, dims: Dims, dtype: DType) -> TestCase:
        def create_inputs(gen: torch.Generator) -> tuple[torch.Tensor, ...]:
            return tuple(t.contiguous() for t in self.make_inputs(dims, dtype, gen))

        return {"name": self.case_name(dims), "dims": dims, "create_inputs": create_inputs, "dtype": dtype}

    def get_flops(self, test_case: TestCase) -> int:
        return self.flops(tuple(test_case["dims"]))

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return self.moved_bytes(tuple(test_case["dims"]), dtype)

    def get_extra_params(self, test_case: TestCase) -> list[Any]:
        return self.extras(tuple(test_case["dims"]))

    def buffer_shapes(self, test_case: TestCase) -> dict[str, tuple[int, ...]]:
        return self.shapes(tuple(test_case["dims"]))


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)
