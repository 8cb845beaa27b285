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
# Element types a buffer may have regardless of the problem's dtype (indices, bytes, words, fp8 scales).
Element = Literal[
    "float32", "float16", "bfloat16", "float8_e4m3", "int8", "int32", "int64", "uint8", "uint32", "uint64", "size_t"
]
ScalarType = Literal["size_t", "int", "float", "uint64_t", "int64_t", "uint32_t"]
DeviceKind = Literal["gpu", "cpu"]
# Where a constant array lives when `solution` is called: device memory (read by kernels), or host memory (read
# by the host code of `solution`, as Tensara passed some shapes; a Python solution gets a CPU tensor).
Memory = Literal["device", "host"]
Difficulty = Literal["easy", "medium", "hard"]
ScoreMetric = Literal["gflops", "gbps"]

# Each element type's C spelling and the header that declares it.
C_TYPES: dict[str, str] = {
    "float32": "float",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "float8_e4m3": "__nv_fp8_e4m3",
    "int8": "int8_t",
    "int32": "int",
    "int64": "long long",
    "uint8": "uint8_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "size_t": "size_t",
}
C_HEADERS: dict[str, str] = {
    "float16": "cuda_fp16.h",
    "bfloat16": "cuda_bf16.h",
    "float8_e4m3": "cuda_fp8.h",
    "int8": "cstdint",
    "uint8": "cstdint",
    "uint32": "cstdint",
    "uint64": "cstdint",
}
ELEMENT_BYTES: dict[str, int] = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3": 1,
    "int8": 1,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint32": 4,
    "uint64": 8,
    "size_t": 8,
}
# The torch dtype of each element type (size_t travels as int64: same width, values far below 2^63).
TORCH_NAMES: dict[str, str] = {
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float8_e4m3": "float8_e4m3fn",
    "int8": "int8",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint32": "uint32",
    "uint64": "uint64",
    "size_t": "int64",
}
# The C type of each scalar, and the element type of an array whose C type is this.
SCALAR_ELEMENTS: dict[str, str] = {"size_t": "size_t", "int": "int32", "uint32_t": "uint32", "uint64_t": "uint64"}

# ctypes has no 16-bit float; the pointer type only fixes the ABI, which is the same for any pointer.
_CTYPES_ELEMENT: dict[str, Any] = {
    "float32": ctypes.c_float,
    "float16": ctypes.c_uint16,
    "bfloat16": ctypes.c_uint16,
    "float8_e4m3": ctypes.c_uint8,
    "int8": ctypes.c_int8,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
}
_CTYPES_SCALAR: dict[str, Any] = {
    "size_t": ctypes.c_size_t,
    "int": ctypes.c_int,
    "float": ctypes.c_float,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
    "uint32_t": ctypes.c_uint32,
}


@dataclass(frozen=True)
class Param:
    """One parameter of `solution(...)`, in ABI order.

    Roles: `input` (a device buffer drawn fresh for every call set), `output` (a device buffer the solution
    writes), `scalar` (a number fixed per test case), `array` (a small constant array per test case, such as a
    shape; `scalar_type` is its C element type). `element` fixes a buffer's element type; None means the
    problem's dtype. `memory` says where an array lives: in device memory (the default) or in host memory, where
    the solution's host code reads it; input and output buffers are always in device memory.
    """

    name: str
    role: Literal["input", "output", "scalar", "array"]
    scalar_type: ScalarType = "size_t"
    doc: str = ""
    element: Element | None = None
    memory: Memory = "device"

    def __post_init__(self) -> None:
        if self.memory not in ("device", "host"):
            raise ValueError(f"parameter {self.name}: memory must be 'device' or 'host', not {self.memory!r}")
        if self.memory == "host" and self.role != "array":
            raise ValueError(f"parameter {self.name}: only a constant array may live in host memory")

    @property
    def is_pointer(self) -> bool:
        return self.role != "scalar"

    @property
    def is_extra(self) -> bool:
        """Whether the value comes from `get_extra_params` (a scalar or a constant array)."""
        return self.role in ("scalar", "array")

    def element_type(self, dtype: DType) -> str:
        """The element type of this buffer when the problem runs in `dtype`."""
        if self.role == "array":
            return SCALAR_ELEMENTS[self.scalar_type]
        return self.element or dtype


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


# The precision audit (docs/precision.md): the operand types of matrix math, widest first, as the runner reads them
# off the compiled code (`contract.precision.OPERANDS`, checked equal in tests/test_architecture.py).
OPERANDS: tuple[str, ...] = ("fp64", "tf32", "fp16", "bf16", "fp8", "int8", "int4")
# What an input of each floating element type may be multiplied in: its own type and every type that keeps its
# values (float16 keeps bfloat16's mantissa, and a wrong range fails verification). float32 has no matrix
# instruction of its own; TF32 keeps its range with float16's mantissa, so it is a problem's choice
# (`Problem.tf32_on_float32`). Integer bytes are exact in every type.
_FLOAT_OPERANDS: dict[str, frozenset[str]] = {
    "float32": frozenset({"fp64"}),
    "float16": frozenset({"fp64", "tf32", "fp16"}),
    "bfloat16": frozenset({"fp64", "tf32", "fp16", "bf16"}),
    "float8_e4m3": frozenset({"fp64", "tf32", "fp16", "bf16", "fp8"}),
    "int8": frozenset(OPERANDS),
    "uint8": frozenset(OPERANDS),
}
# TF32's unit roundoff is 2^-11 (4.9e-4): a float32 bound of rtol 2e-3 or more admits its products, as Tensara's
# GEMM and convolution checks did, and PyTorch's own float32 convolutions on the GPU use it.
TF32_MIN_RTOL = 2e-3


# Which bounds the judge's implausible-time floor may use for a problem (docs/integrity.md, "The physical floor").
FloorKind = Literal["bytes", "bytes-and-flops"]
FLOOR_KINDS: tuple[FloorKind, ...] = ("bytes", "bytes-and-flops")


@dataclass(frozen=True)
class TimeFloor:
    """What no correct solution of a problem can avoid: the judge rejects a median time under what this work
    takes at the GPU's fastest rates (`implausible_time`), so it must hold for every algorithm, not the formula's.

    `bytes`, the default: memory traffic only. `read_share` of the input bytes that `get_bytes` counts must be
    read, and the outputs written. The FLOP count is no bound: a cleverer algorithm than the formula's does less
    arithmetic (Strassen for a product, an FFT or NTT for a convolution, Winograd for a small filter).
    `bytes-and-flops`: the traffic, and `get_flops` as well, for a problem where no algorithm can do fewer
    operations; `why` says why (tests/measure/test_floor.py holds the reviewed list).
    `read_share` is below 1 where a correct solution may skip part of its inputs (the zeros of a triangular
    operand, one half of a symmetric one, elements no pooling window covers); `why` says which part.
    """

    kind: FloorKind = "bytes"
    read_share: float = 1.0
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FLOOR_KINDS:
            raise ValueError(f"time floor kind {self.kind!r}: use one of {', '.join(FLOOR_KINDS)}")
        if not 0.0 <= self.read_share <= 1.0:
            raise ValueError(f"time floor read_share {self.read_share}: give the share of inputs read, 0 to 1")
        if (self.kind != "bytes" or self.read_share < 1.0) and not self.why:
            raise ValueError("a time floor that counts FLOPs or skips inputs must say why in `why`")

    @property
    def counts_flops(self) -> bool:
        return self.kind == "bytes-and-flops"

    def summary(self) -> str:
        """One line for `arena show`: which work bounds the fastest time the judge accepts."""
        if self.read_share >= 1.0:
            reads = "the inputs read and "
        elif self.read_share > 0.0:
            reads = f"{self.read_share:.0%} of the inputs read and "
        else:
            reads = ""
        text = f"{self.kind}: {reads}the outputs an L2 cannot hold, at the GPU's peak bandwidth"
        if self.counts_flops:
            text += "; and the FLOPs, at its fastest arithmetic rate"
        else:
            text += "; not the FLOPs (an algorithm cleverer than the formula's may do less arithmetic)"
        return f"{text}. {self.why}" if self.why else text


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
    # Former slugs that still name this problem (`/submit matmul` for `matrix-multiplication`).
    aliases: ClassVar[tuple[str, ...]] = ()
    # What `reference_solution` receives: the input buffers only (the seed's form), or every non-output
    # argument in ABI order, scalars and constant arrays (as lists) included.
    reference_arguments: ClassVar[Literal["inputs", "all"]] = "inputs"
    # What bounds the fastest time the judge accepts (bytes only unless the FLOP formula is a lower bound).
    time_floor: ClassVar[TimeFloor] = TimeFloor()
    # Whether a float32 board accepts TF32 matrix math; None: where the float32 tolerance admits it (TF32_MIN_RTOL).
    tf32_on_float32: ClassVar[bool | None] = None

    # -- the seed's methods -------------------------------------------------------------------------------

    @abstractmethod
    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        """The correct outputs for `inputs`, computed by PyTorch in at least float32 precision."""

    @abstractmethod
    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        """The test cases for `dtype`, small to large. `device_kind="cpu"` gives sizes a CPU runs in seconds."""

    def holdout_cases(self, dtype: DType, device_kind: DeviceKind, seed: int) -> list[TestCase]:
        """Hidden test cases a ranked run verifies beside the public ones, drawn with `seed`: shapes in none of the
        public cases, so that code specialised to the public shapes is not ranked as a general solution. None by
        default; `problems.library.KernelProblem` draws them from each problem's declared ranges."""
        return []

    def verify_result(
        self, expected_output: torch.Tensor, actual_output: torch.Tensor, dtype: DType
    ) -> tuple[bool, dict[str, Any]]:
        """Compare one output with the reference under the dtype's tolerance; details say where it differs."""
        from problems.verification import compare_outputs

        return compare_outputs(expected_output, actual_output, self.tolerances[dtype])

    def get_function_signature(self, dtype: DType = "float32") -> dict[str, Any]:
        """The ctypes signature of `solution`, in ABI order."""
        argtypes = [
            ctypes.POINTER(_CTYPES_ELEMENT[p.element_type(dtype)]) if p.is_pointer else _CTYPES_SCALAR[p.scalar_type]
            for p in self.ordered_parameters()
        ]
        return {"argtypes": argtypes, "restype": None}

    @abstractmethod
    def get_flops(self, test_case: TestCase) -> int:
        """Floating-point operations one call performs on this case (see `flops_formula`)."""

    @abstractmethod
    def get_extra_params(self, test_case: TestCase) -> list[Any]:
        """The values of the scalar and array parameters, in signature order (an array as a list of ints)."""

    # -- additions ----------------------------------------------------------------------------------------

    @abstractmethod
    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        """The fewest bytes any correct solution must move through device memory for this case."""

    def accepted_operands(self, dtype: DType) -> frozenset[str] | None:
        """The operand types (`OPERANDS`) a ranked run on the `dtype` board may do matrix math in: what its widest-
        reaching floating input allows. None when no input is floating: the check is exact, so no type is below it."""
        inputs = [p.element_type(dtype) for p in self.parameters if p.role == "input"]
        allowed = [_FLOAT_OPERANDS[e] for e in inputs if e in _FLOAT_OPERANDS and not e.endswith("int8")]
        if not allowed:
            return None
        accepted = frozenset().union(*allowed, *(_FLOAT_OPERANDS[e] for e in inputs if e.endswith("int8")))
        tf32 = self.tf32_on_float32
        if tf32 is None:
            tf32 = self.tolerances["float32"].rtol >= TF32_MIN_RTOL if "float32" in self.tolerances else False
        return accepted | {"tf32"} if tf32 and "float32" in inputs else accepted

    def ordered_parameters(self) -> list[Param]:
        """Parameters in ABI order: the order `parameters` declares them."""
        return list(self.parameters)

    def output_count(self) -> int:
        return sum(1 for p in self.parameters if p.role == "output")

    def arguments(self, inputs: Sequence[Any], outputs: Sequence[Any], extras: Sequence[Any]) -> list[Any]:
        """The arguments of one call in ABI order, from the input buffers, output buffers and extra values."""
        extra_values = iter(extras)  # scalars and arrays share one list, in signature order
        sources = {"input": iter(inputs), "output": iter(outputs), "scalar": extra_values, "array": extra_values}
        counts = {"input": len(inputs), "output": len(outputs), "extra": len(extras)}
        wanted = {
            "input": sum(p.role == "input" for p in self.parameters),
            "output": self.output_count(),
            "extra": sum(p.is_extra for p in self.parameters),
        }
        if counts != wanted:
            raise ValueError(f"{self.slug}: got {counts} values for parameters that take {wanted}")
        return [next(sources[p.role]) for p in self.parameters]

    def reference_outputs(
        self, inputs: Sequence[torch.Tensor], extras: Sequence[Any] | None = None
    ) -> tuple[torch.Tensor, ...]:
        """The reference's outputs, always as a tuple. `extras` are the case's `get_extra_params`."""
        if self.reference_arguments == "all":
            outputs = [None] * self.output_count()
            arranged = self.arguments(inputs, outputs, list(extras or ()))
            kept = [a for p, a in zip(self.parameters, arranged, strict=True) if p.role != "output"]
            out = self.reference_solution(*kept)
        else:
            out = self.reference_solution(*inputs)
        return out if isinstance(out, tuple) else (out,)

    def buffer_shapes(self, test_case: TestCase) -> dict[str, tuple[int, ...]] | None:
        """The shape of each buffer parameter in this case, by name, where the problem states them."""
        return None

    def output_dtype(self, dtype: DType) -> DType:
        """The dtype of the outputs the solution writes. Same as the inputs unless a problem says otherwise."""
        return dtype

    def output_elements(self, dtype: DType) -> list[str]:
        """The element type of each output buffer, in order: its own `element`, else `output_dtype`."""
        return [p.element or self.output_dtype(dtype) for p in self.parameters if p.role == "output"]
