"""The Problem contract: the seed's seven methods plus the metadata a competition needs.

A problem owns everything that defines "correct" and "how much work": the reference, the test cases, the
verification rule, the C signature, and exact FLOP and byte counts. It never touches timing or processes.
"""

from __future__ import annotations

import ctypes
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    import torch

DType = Literal["float32", "float16", "bfloat16"]
DTYPES: tuple[DType, ...] = ("float32", "float16", "bfloat16")
DeviceKind = Literal["gpu", "cpu"]
Difficulty = Literal["easy", "medium", "hard"]
ScoreMetric = Literal["gflops", "gbps"]

# Each dtype's C spelling and the header that declares it.
C_TYPES: dict[DType, str] = {"float32": "float", "float16": "__half", "bfloat16": "__nv_bfloat16"}
C_HEADERS: dict[DType, str] = {"float32": "", "float16": "cuda_fp16.h", "bfloat16": "cuda_bf16.h"}
ELEMENT_BYTES: dict[DType, int] = {"float32": 4, "float16": 2, "bfloat16": 2}

# ctypes has no 16-bit float; the pointer type only fixes the ABI, which is the same for any pointer.
_CTYPES_POINTER: dict[DType, Any] = {
    "float32": ctypes.POINTER(ctypes.c_float),
    "float16": ctypes.POINTER(ctypes.c_uint16),
    "bfloat16": ctypes.POINTER(ctypes.c_uint16),
}
_CTYPES_SCALAR: dict[str, Any] = {"size_t": ctypes.c_size_t, "int": ctypes.c_int, "float": ctypes.c_float}


@dataclass(frozen=True)
class Param:
    """One parameter of `solution(...)`: a device buffer (input or output) or a scalar extra parameter."""

    name: str
    role: Literal["input", "output", "scalar"]
    scalar_type: Literal["size_t", "int", "float"] = "size_t"
    doc: str = ""

    @property
    def is_pointer(self) -> bool:
        return self.role != "scalar"


@dataclass(frozen=True)
class Tolerance:
    """Elementwise check |actual - expected| <= atol * rms(expected) + rtol * |expected|.

    atol is scaled by the RMS of the expected output so that one tolerance fits every problem size.
    """

    rtol: float
    atol: float


DEFAULT_TOLERANCES: dict[DType, Tolerance] = {
    "float32": Tolerance(rtol=1e-4, atol=1e-4),
    "float16": Tolerance(rtol=5e-3, atol=5e-3),
    "bfloat16": Tolerance(rtol=2e-2, atol=2e-2),
}


class TestCase(TypedDict):
    """A test case: the seed's dict form. `create_inputs` draws fresh inputs from a generator on its device."""

    __test__ = False  # type: ignore[misc]  # not a pytest test class

    name: str
    dims: tuple[int, ...]
    create_inputs: Callable[[torch.Generator], tuple[torch.Tensor, ...]]
    dtype: NotRequired[DType]


class Problem(ABC):
    """A kernel problem. Subclasses set the metadata and implement the abstract methods.

    The seven seed methods are `reference_solution`, `generate_test_cases`, `verify_result`,
    `get_function_signature`, `get_flops`, `get_extra_params`, and starter code (`problems.starter`), which is
    generated from the signature. `get_bytes` is added: the fewest bytes any correct solution must move.
    """

    slug: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ()
    difficulty: ClassVar[Difficulty] = "easy"
    version: ClassVar[int] = 1
    dtypes: ClassVar[tuple[DType, ...]] = DTYPES
    parameters: ClassVar[tuple[Param, ...]]
    flops_formula: ClassVar[str]
    bytes_formula: ClassVar[str]
    # Memory-bound problems with no arithmetic (transpose) are scored in GB/s instead of GFLOPS.
    score_metric: ClassVar[ScoreMetric] = "gflops"
    tolerances: ClassVar[dict[DType, Tolerance]] = DEFAULT_TOLERANCES

    # -- the seed's methods -------------------------------------------------------------------------------

    @abstractmethod
    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """The correct outputs for `inputs`, computed by PyTorch in at least float32 precision."""

    @abstractmethod
    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        """The test cases for `dtype`, small to large. `device_kind="cpu"` gives sizes a CPU runs in seconds."""

    def verify_result(
        self, expected_output: torch.Tensor, actual_output: torch.Tensor, dtype: DType
    ) -> tuple[bool, dict[str, Any]]:
        """Compare one output with the reference under the dtype's tolerance; details say where it differs."""
        from problems.verification import compare_outputs

        return compare_outputs(expected_output, actual_output, self.tolerances[dtype])

    def get_function_signature(self, dtype: DType = "float32") -> dict[str, Any]:
        """The ctypes signature of `solution`: inputs, then outputs, then extra params."""
        argtypes = [
            _CTYPES_POINTER[dtype] if p.is_pointer else _CTYPES_SCALAR[p.scalar_type] for p in self.ordered_parameters()
        ]
        return {"argtypes": argtypes, "restype": None}

    @abstractmethod
    def get_flops(self, test_case: TestCase) -> int:
        """Floating-point operations one call performs on this case (see `flops_formula`)."""

    @abstractmethod
    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        """The scalar parameters passed after the buffers, in signature order."""

    # -- additions ----------------------------------------------------------------------------------------

    @abstractmethod
    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        """The fewest bytes any correct solution must move through device memory for this case."""

    def ordered_parameters(self) -> list[Param]:
        """Parameters in ABI order: inputs, outputs, then scalars."""
        order = {"input": 0, "output": 1, "scalar": 2}
        return sorted(self.parameters, key=lambda p: order[p.role])

    def output_count(self) -> int:
        return sum(1 for p in self.parameters if p.role == "output")

    def reference_outputs(self, inputs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """The reference's outputs, always as a tuple."""
        out = self.reference_solution(*inputs)
        return out if isinstance(out, tuple) else (out,)

    def output_dtype(self, dtype: DType) -> DType:
        """The dtype of the outputs the solution writes. Same as the inputs unless a problem says otherwise."""
        return dtype
