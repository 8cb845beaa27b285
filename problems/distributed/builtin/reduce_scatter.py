"""reduce-scatter: rank r ends with the sum over ranks of the r-th block of every rank's vector."""

from __future__ import annotations

from typing import Any

import problems.distributed.builtin._collective as shared
from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes


class ReduceScatter(DistributedProblem):
    slug = "reduce-scatter"
    title = "Reduce-Scatter (Sum)"
    description = (
        "Every rank holds world_size · n elements in `d_input`. Write into rank r's `d_output` (n elements) the sum "
        "over ranks of block r: `d_output[i] = sum over ranks s of d_input_s[r·n + i]`." + shared.CALLING
    )
    tags = ("distributed", "collective", "reduce-scatter", "memory-bound")
    difficulty = "easy"
    collective = "reduce-scatter"
    parameters = (
        Param("d_input", "input", doc="world_size · n elements, this rank's"),
        Param("d_output", "output", doc="n elements: block `rank` summed over ranks"),
        Param("n", "scalar", "size_t", "elements of each rank's result"),
    )
    gpu_cases = ((1_000_003,), (1 << 22,), ((1 << 24) + 17,))
    cpu_cases = ((3,), (1001,), (4099,))
    dim_names = ("n",)
    flops_formula = "(world_size − 1) · n adds per rank (its block, summed over ranks)"
    bytes_formula = (
        "S = world_size · n · sizeof(dtype) (each rank's input); busbw = S / time · (world_size − 1)/world_size "
        "(nccl-tests); the floor: n · sizeof(dtype) must reach each rank (its block, reduced in flight at best)"
    )
    tolerances = shared.REDUCTION_TOLERANCES

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        return {"d_input": (world_size * dims[0],), "d_output": dims}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        return [dims[0]]

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        n = dims[0]
        total = shared.sum_of_ranks([rank[0] for rank in inputs])
        return [(total[r * n : (r + 1) * n].clone(),) for r in range(world_size)]

    def flops(self, dims: Dims, world_size: int) -> int:
        return (world_size - 1) * dims[0]

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        return elements_bytes(world_size * dims[0], dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        # A switch that reduces in flight (NVLink SHARP) delivers only the reduced block.
        return elements_bytes(dims[0], dtype)
