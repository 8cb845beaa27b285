"""vector-addition: C = A + B over n elements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, TimeFloor, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class VectorAddition(KernelProblem):
    slug = "vector-addition"
    # The seed's `vector_add` had the same ABI (two inputs, the output, n) under other parameter names.
    aliases = ("vector_add",)
    version = 1
    title = "Vector Addition"
    description = (
        "Add two vectors of n elements elementwise: `d_output[i] = d_input1[i] + d_input2[i]` for every `i < n`. "
        "n is not a multiple of any block size in every case."
    )
    tags = ("vector", "elementwise", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("d_input1", "input", doc="n elements"),
        Param("d_input2", "input", doc="n elements"),
        Param("d_output", "output", doc="n elements"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    # A ragged million, then powers of two up to 2^26 (800 MB moved in float32) and a ragged tail on the largest.
    gpu_cases = ((1_000_003,), (1 << 22,), (1 << 24,), ((1 << 26) + 17,))
    cpu_cases = ((7,), (1000,), (65_539,))
    dim_names = ("n",)
    flops_formula = "n (one add per element)"
    bytes_formula = "3 · n · sizeof(dtype) (read A and B, write C)"
    # Tensara: allclose(rtol=1e-4, atol=1e-4) on sums of RMS 0.82.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-4, atol=2e-4),
    }
    time_floor = TimeFloor("bytes-and-flops", why="Each output is a sum no other output shares: n adds at the least.")

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"d_input1": dims, "d_input2": dims, "d_output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return dims[0]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() + args[1].double()
