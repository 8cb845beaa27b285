"""all-reduce: every rank ends with the elementwise sum of every rank's vector."""

from __future__ import annotations

from typing import Any

from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes
from problems.distributed.builtin._collective import CALLING, REDUCTION_TOLERANCES, sum_of_ranks


class AllReduce(DistributedProblem):
    slug = "all-reduce"
    title = "All-Reduce (Sum)"
    description = (
        "Every rank holds a vector of n elements in `d_input`. Write into every rank's `d_output` the elementwise sum "
        "of all ranks' vectors: `d_output[i] = sum over ranks r of d_input_r[i]`. n is ragged in some cases." + CALLING
    )
    tags = ("distributed", "collective", "all-reduce", "memory-bound")
    difficulty = "easy"
    collective = "all-reduce"
    parameters = (
        Param("d_input", "input", doc="n elements, this rank's"),
        Param("d_output", "output", doc="n elements: the sum over ranks"),
        Param("n", "scalar", "size_t", "elements per rank"),
    )
    # A ragged million, then 64 MiB and 256 MiB of float32 per rank (nccl-tests' bandwidth plateau), ragged tail.
    gpu_cases = ((1_000_003,), (1 << 24,), ((1 << 26) + 17,))
    cpu_cases = ((7,), (1000,), (4099,))
    dim_names = ("n",)
    flops_formula = "(world_size − 1) · n / world_size adds per rank (the sum's adds, shared by the ranks)"
    bytes_formula = (
        "S = n · sizeof(dtype); algbw = S / time, busbw = algbw · 2(world_size − 1)/world_size (nccl-tests); the "
        "floor: (world_size − 1)/world_size · S must reach each rank"
    )
    tolerances = REDUCTION_TOLERANCES

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        return {"d_input": dims, "d_output": dims}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        return [dims[0]]

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        total = sum_of_ranks([rank[0] for rank in inputs])
        return [(total.clone(),) for _ in range(world_size)]

    def flops(self, dims: Dims, world_size: int) -> int:
        return (world_size - 1) * dims[0] // world_size

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        return elements_bytes(dims[0], dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        # Conservative: a rank that reduces its own 1/world_size of the elements (or has a switch reduce them) still
        # receives the rest of the result from its peers.
        return elements_bytes(dims[0], dtype) * (world_size - 1) // world_size
