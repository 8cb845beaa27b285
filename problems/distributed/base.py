"""The N-rank problem contract: per-rank inputs drawn by the judge, a reference that sees every rank, per-rank
expected outputs, and nccl-tests' bandwidth arithmetic.

A distributed problem is stated like a `KernelProblem`: its parameters (one rank's view of the call), its cases as
tuples of sizes, the shape of each buffer, the FLOPs. What is new is the rank: shapes and extra values may differ
from rank to rank (an all-to-all's splits), and the reference takes every rank's inputs at once and gives every
rank's outputs, since a collective's answer on one rank depends on the others' inputs.

How a solution is called (docs/distributed.md, "The contract"):

- Python: `solution(*abi_arguments, rank, world_size, group)`, positionally, where `abi_arguments` are this rank's
  buffers, scalars and constant arrays in the order `parameters` declares them (as for one GPU) and `group` is an
  initialised `torch.distributed` process group over every rank (NCCL on GPUs, gloo on the CPU).
- CUDA: `extern "C" void solution(<abi parameters>, int rank, int world_size, ncclComm_t comm,
  void* const* peer_buffers, size_t symmetric_bytes)`; `cuda_signature` spells it out per problem.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from problems.base import (
    C_TYPES,
    DEFAULT_TOLERANCES,
    DTYPES,
    ELEMENT_BYTES,
    DeviceKind,
    Difficulty,
    DType,
    Param,
    ScoreMetric,
    Tolerance,
)

if TYPE_CHECKING:
    import torch

Dims = tuple[int, ...]
Collective = Literal["all-reduce", "all-gather", "reduce-scatter", "all-to-all"]
# Per rank, in rank order: each rank's tensors (its inputs, or its outputs).
RankTensors = list[tuple["torch.Tensor", ...]]

# What the floors assume of the links, said once for every problem: `floor_bytes` counts only what must cross into
# a rank, so a switch that reduces in flight (NVLink SHARP) or a faster topology cannot beat it.
LINK_ASSUMPTION = (
    "The floor assumes only that each GPU receives at most its links' peak unidirectional bandwidth (NVLink or "
    "PCIe, as the runner's topology reports): it counts the bytes every correct algorithm must deliver into each "
    "rank from the others, even where the switch reduces in flight (NVLink SHARP), and no bytes a rank keeps."
)


def bus_factor(collective: Collective, world_size: int) -> float:
    """nccl-tests' factor from algorithm to bus bandwidth (its PERFORMANCE.md): what each rank's links carry per
    byte of the operation under the bandwidth-optimal ring, so one figure compares across world sizes."""
    n = world_size
    if collective == "all-reduce":
        return 2 * (n - 1) / n
    if collective in ("all-gather", "reduce-scatter", "all-to-all"):
        return (n - 1) / n
    raise ValueError(f"unknown collective {collective!r}")


class DistributedCase(TypedDict):
    """A test case: its name, its sizes (one rank's, as the problem states them) and its dtype. The world size is
    the run's, not the case's, so one case runs at every world size the problem declares."""

    name: str
    dims: Dims
    dtype: DType


class DistributedProblem(ABC):
    """A problem whose solution runs on `world_size` ranks at once. Subclasses state the metadata and the rules."""

    slug: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ("distributed",)
    difficulty: ClassVar[Difficulty] = "medium"
    version: ClassVar[int] = 1
    dtypes: ClassVar[tuple[DType, ...]] = DTYPES
    # The world sizes a board exists for: one board per (problem, GPU pool, world size, dtype).
    world_sizes: ClassVar[tuple[int, ...]] = (2, 4, 8)
    # One rank's parameters, in ABI order (the harness appends rank, world size and the group or communicator).
    parameters: ClassVar[tuple[Param, ...]]
    # The communication pattern whose bus factor turns algorithm bandwidth into bus bandwidth.
    collective: ClassVar[Collective]
    flops_formula: ClassVar[str]
    bytes_formula: ClassVar[str]
    link_assumption: ClassVar[str] = LINK_ASSUMPTION
    score_metric: ClassVar[ScoreMetric] = "gbps"
    tolerances: ClassVar[dict[DType, Tolerance]] = DEFAULT_TOLERANCES
    gpu_cases: ClassVar[tuple[Dims, ...]]
    cpu_cases: ClassVar[tuple[Dims, ...]]
    dim_names: ClassVar[tuple[str, ...]] = ()

    # -- what a problem states -------------------------------------------------------------------------------

    @abstractmethod
    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        """The shape of every input and output buffer of `rank`, by parameter name."""

    @abstractmethod
    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        """Every rank's correct outputs from every rank's inputs, computed in float64 by PyTorch."""

    @abstractmethod
    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        """nccl-tests' size S of the collective (`bytes_formula`): algorithm bandwidth is S over the time."""

    @abstractmethod
    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        """The bytes every correct algorithm must deliver into the busiest rank from its peers (`link_assumption`)."""

    def symmetric_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        """The size of each rank's symmetric buffer (the CUDA ABI's `peer_buffers`): by default the largest buffer
        of any rank, so that a peer-pointer kernel can stage a whole input or output in its peers' memory."""
        largest = 0
        for rank in range(world_size):
            shapes = self.rank_shapes(dims, rank, world_size)
            for p in self.parameters:
                if p.role in ("input", "output"):
                    largest = max(largest, elements_bytes(numel(shapes[p.name]), p.element_type(dtype)))
        return largest

    def flops(self, dims: Dims, world_size: int) -> int:
        """Floating-point operations of one rank's call (the reductions' adds, a GEMM's 2·M·N·K)."""
        return 0

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        """The values of `rank`'s scalar and array parameters, in ABI order (an array as a list of ints)."""
        return []

    def make_rank_inputs(
        self, dims: Dims, dtype: DType, rank: int, world_size: int, gen: torch.Generator
    ) -> tuple[torch.Tensor, ...]:
        """Fresh inputs of `rank` for one call: standard normal values in each input's element type."""
        from problems.inputs import randn

        shapes = self.rank_shapes(dims, rank, world_size)
        return tuple(randn(shapes[p.name], p.element_type(dtype), gen) for p in self.input_params())  # type: ignore[arg-type]

    # -- derived ---------------------------------------------------------------------------------------------

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[DistributedCase]:
        """The cases for `dtype`, small to large; `device_kind="cpu"` gives sizes gloo runs in well under a second."""
        cases = self.gpu_cases if device_kind == "gpu" else self.cpu_cases
        return [{"name": self.case_name(dims), "dims": tuple(dims), "dtype": dtype} for dims in cases]

    def case_name(self, dims: Dims) -> str:
        if self.dim_names and len(self.dim_names) == len(dims):
            return ",".join(f"{name}={value}" for name, value in zip(self.dim_names, dims, strict=True))
        return "x".join(str(d) for d in dims)

    def check_world_size(self, world_size: int) -> None:
        """Refuse a world size the problem has no board for. One rank is always allowed: it is the run a single
        device can check (the harness, one rank's clock, the CUDA ABI), and no board takes it."""
        if world_size != 1 and world_size not in self.world_sizes:
            sizes = ", ".join(str(n) for n in self.world_sizes)
            raise ValueError(f"{self.slug} runs on {sizes} ranks, not {world_size}")

    def input_params(self) -> list[Param]:
        return [p for p in self.parameters if p.role == "input"]

    def output_params(self) -> list[Param]:
        return [p for p in self.parameters if p.role == "output"]

    def ordered_parameters(self) -> list[Param]:
        return list(self.parameters)

    def output_elements(self, dtype: DType) -> list[str]:
        return [p.element_type(dtype) for p in self.output_params()]

    def rank_inputs(
        self, case: DistributedCase, rank: int, world_size: int, gen: torch.Generator
    ) -> tuple[torch.Tensor, ...]:
        """`rank`'s inputs for one call, drawn from `gen` on its device (the judge seeds one generator per rank)."""
        self.check_world_size(world_size)
        drawn = self.make_rank_inputs(tuple(case["dims"]), case["dtype"], rank, world_size, gen)
        return tuple(t.contiguous() for t in drawn)

    def expected_outputs(self, case: DistributedCase, inputs: RankTensors, world_size: int) -> RankTensors:
        """Every rank's expected outputs, checked for count against the parameters."""
        if len(inputs) != world_size:
            raise ValueError(f"{self.slug}: got inputs of {len(inputs)} ranks for a world of {world_size}")
        outputs = self.reference(tuple(case["dims"]), inputs, world_size)
        if len(outputs) != world_size or any(len(o) != len(self.output_params()) for o in outputs):
            raise ValueError(f"{self.slug}: the reference gave outputs that do not match the parameters")
        return outputs

    def output_shapes(self, case: DistributedCase, rank: int, world_size: int) -> list[tuple[int, ...]]:
        shapes = self.rank_shapes(tuple(case["dims"]), rank, world_size)
        return [shapes[p.name] for p in self.output_params()]

    def get_extra_params(self, case: DistributedCase, rank: int, world_size: int) -> list[Any]:
        return self.rank_extras(tuple(case["dims"]), rank, world_size)

    def get_flops(self, case: DistributedCase, world_size: int) -> int:
        return self.flops(tuple(case["dims"]), world_size)

    def get_bytes(self, case: DistributedCase, dtype: DType, world_size: int) -> int:
        """The algorithm bytes S of nccl-tests: the figure `score_metric = "gbps"` divides by the time."""
        return self.algorithm_bytes(tuple(case["dims"]), dtype, world_size)

    def bus_bytes(self, case: DistributedCase, dtype: DType, world_size: int) -> float:
        """S times the bus factor: the bytes each rank's links carry under the ring (nccl-tests' busbw numerator)."""
        return self.get_bytes(case, dtype, world_size) * bus_factor(self.collective, world_size)

    def algorithm_bandwidth(self, case: DistributedCase, dtype: DType, world_size: int, seconds: float) -> float:
        """Bytes per second of the operation: S / time (nccl-tests' algbw)."""
        return self.get_bytes(case, dtype, world_size) / seconds

    def bus_bandwidth(self, case: DistributedCase, dtype: DType, world_size: int, seconds: float) -> float:
        """algbw times the bus factor (nccl-tests' busbw), comparable with the links' peak at every world size."""
        return self.algorithm_bandwidth(case, dtype, world_size, seconds) * bus_factor(self.collective, world_size)

    def floor_seconds(self, case: DistributedCase, dtype: DType, world_size: int, link_bytes_per_s: float) -> float:
        """The fastest time any correct solution can take over links of `link_bytes_per_s` into each GPU."""
        return self.floor_bytes(tuple(case["dims"]), dtype, world_size) / link_bytes_per_s

    def verify_result(
        self, expected_output: torch.Tensor, actual_output: torch.Tensor, dtype: DType
    ) -> tuple[bool, dict[str, Any]]:
        """One output of one rank against the reference, under the dtype's tolerance (as for one GPU)."""
        from problems.verification import compare_outputs

        return compare_outputs(expected_output, actual_output, self.tolerances[dtype])

    def python_signature(self) -> str:
        """The Python solution's `def` line: the ABI parameters, then the rank, the world size and the group."""
        parts = [
            f"{p.name}: {'torch.Tensor' if p.is_pointer else ('float' if p.scalar_type == 'float' else 'int')}"
            for p in self.parameters
        ]
        parts += ["rank: int", "world_size: int", "group: torch.distributed.ProcessGroup"]
        return f"def solution({', '.join(parts)}) -> None:"

    def cuda_signature(self, dtype: DType = "float32") -> str:
        """The CUDA solution's declaration: the ABI parameters, then the harness's rank, world size, NCCL
        communicator and the peers' symmetric buffers (mapped by CUDA IPC, `peer_buffers[rank]` is this rank's)."""
        parts = []
        for p in self.parameters:
            if p.role == "scalar":
                parts.append(f"{p.scalar_type} {p.name}")
            else:
                const = "" if p.role == "output" else "const "
                parts.append(f"{const}{C_TYPES[p.element_type(dtype)]}* {p.name}")
        parts += ["int rank", "int world_size", "ncclComm_t comm"]
        parts += ["void* const* peer_buffers", "size_t symmetric_bytes"]
        return f'extern "C" void solution({", ".join(parts)})'


def elements_bytes(count: int, element: str) -> int:
    return count * ELEMENT_BYTES[element]


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)
