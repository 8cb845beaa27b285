"""The declarative form of a problem: what the library's problems state, and what this base derives from it.

A `KernelProblem` states its parameters, its cases as tuples of sizes (`gpu_cases`, `cpu_cases`), the shape of
each buffer for a case, the extra values for a case, its FLOP count and its reference. Test cases, fresh inputs,
byte counts, extra parameters and the shapes shown to competitors all follow from those.

The reference receives every non-output argument in ABI order (`reference_arguments = "all"`): the input
tensors, and the scalars and constant arrays (as lists) where the signature puts them.
"""

from __future__ import annotations

import math
import random
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Problem, TestCase

if TYPE_CHECKING:
    import torch

Dims = tuple[int, ...]
DimRange = tuple[int, int]
# How many hidden shapes a ranked run verifies, beside the public cases (verified, never timed).
HOLDOUT_CASES = 2
_HOLDOUT_DRAWS = 200


class KernelProblem(Problem):
    """A problem stated by its sizes; subclasses give shapes, extras, FLOPs and the reference."""

    reference_arguments = "all"
    # Sizes of each case, small to large. Every problem has a ragged case (sizes off the multiples of 32, 64
    # and 128, non-square) so that kernels assuming nice shapes fail.
    gpu_cases: ClassVar[tuple[Dims, ...]]
    cpu_cases: ClassVar[tuple[Dims, ...]]
    # Names of the sizes in a case, for case names and tables (`("m", "n", "k")`).
    dim_names: ClassVar[tuple[str, ...]] = ()
    # The range of each size that hidden shapes are drawn from, per device kind; None: from the lowest to the
    # highest value of that size among the kind's public cases (a size that never varies stays as it is).
    holdout_ranges: ClassVar[dict[DeviceKind, tuple[DimRange, ...]] | None] = None
    # A size that must be a multiple of something (a quantisation block, an even head size), per size; None: any.
    holdout_multiples: ClassVar[tuple[int, ...] | None] = None

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

    def holdout_valid(self, dims: Dims) -> bool:
        """Whether drawn sizes make a case of this problem (a problem whose sizes constrain each other says so)."""
        return True

    def dim_ranges(self, device_kind: DeviceKind) -> list[tuple[DimRange, ...]]:
        """The ranges hidden shapes are drawn from: `holdout_ranges`, or for each length of the public cases (a
        problem may mix 1-D and 2-D cases), from the lowest to the highest value of each size among them."""
        if self.holdout_ranges is not None and device_kind in self.holdout_ranges:
            return [self.holdout_ranges[device_kind]]
        cases = self.gpu_cases if device_kind == "gpu" else self.cpu_cases
        lengths = sorted({len(c) for c in cases})
        ranges = []
        for n in lengths:
            group = [c for c in cases if len(c) == n]
            if len(group) == 1:  # one case of this rank: around its sizes, from half to twice each
                ranges.append(tuple((max(1, v // 2), max(1, v * 2)) if v > 1 else (v, v) for v in group[0]))
            else:
                ranges.append(tuple((min(sizes), max(sizes)) for sizes in zip(*group, strict=True)))
        return ranges

    def holdout_dims(self, device_kind: DeviceKind, rng: random.Random, count: int = HOLDOUT_CASES) -> list[Dims]:
        """Sizes that are in no public case, drawn from the declared ranges: each size log-uniform in its range and
        off the multiples of 32 where the range allows, so shapes are ragged and of other aspect ratios than the
        public ones."""
        public = {tuple(c) for c in (*self.gpu_cases, *self.cpu_cases)}
        choices = self.dim_ranges(device_kind)
        drawn: list[Dims] = []
        for _ in range(_HOLDOUT_DRAWS):
            ranges = rng.choice(choices)
            # The multiples name the last sizes (a GEMM's K after M and N): padded with 1 in front.
            declared = self.holdout_multiples or ()
            multiples = (1,) * max(0, len(ranges) - len(declared)) + declared[-len(ranges) :]
            dims = tuple(_draw(low, high, rng, m) for (low, high), m in zip(ranges, multiples, strict=True))
            if dims not in public and dims not in drawn and self.holdout_valid(dims):
                drawn.append(dims)
                if len(drawn) == count:
                    break
        return drawn

    def holdout_cases(self, dtype: DType, device_kind: DeviceKind, seed: int) -> list[TestCase]:
        """Hidden test cases for a ranked run: verified beside the public ones, never shown, never timed."""
        return [self._case(dims, dtype) for dims in self.holdout_dims(device_kind, random.Random(seed))]

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


def _draw(low: int, high: int, rng: random.Random, multiple: int = 1) -> int:
    if low >= high:
        return low
    value = round(math.exp(rng.uniform(math.log(max(low, 1)), math.log(high))))
    value = min(max(value, low), high)
    if multiple > 1:  # a size that must be a multiple: the nearest one in the range
        value = max(multiple * math.ceil(low / multiple), multiple * round(value / multiple))
        return min(value, multiple * (high // multiple)) if high >= multiple else value
    if value % 32 == 0:  # ragged: off the tile multiples, where the range has room
        value = value + 1 if value + 1 <= high else value - 1
    return max(value, low)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)
