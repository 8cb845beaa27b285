"""all-gather: every rank ends with every rank's vector, in rank order."""

from __future__ import annotations

from typing import Any

import problems.distributed.builtin._collective as shared
from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes


class AllGather(DistributedProblem):
    slug = "all-gather"
    title = "All-Gather"
    description = (
        "Every rank holds n elements in `d_input`. Write into every rank's `d_output` (world_size · n elements) "
        "all ranks' inputs in rank order: `d_output[r·n + i] = d_input_r[i]`. Values are copied: checked bit for bit."
        + shared.CALLING
    )
    tags = ("distributed", "collective", "all-gather", "memory-bound")
    difficulty = "easy"
    collective = "all-gather"
    parameters = (
        Param("d_input", "input", doc="n elements, this rank's"),
        Param("d_output", "output", doc="world_size · n elements: rank r's input at r·n"),
        Param("n", "scalar", "size_t", "elements per rank"),
    )
    gpu_cases = ((1_000_003,), (1 << 22,), ((1 << 24) + 17,))
    cpu_cases = ((5,), (999,), (4099,))
    dim_names = ("n",)
    flops_formula = "0 (a copy)"
    bytes_formula = (
        "S = world_size · n · sizeof(dtype) (the gathered buffer); busbw = S / time · (world_size − 1)/world_size "
        "(nccl-tests); the floor: (world_size − 1) · n · sizeof(dtype) must reach each rank"
    )
    tolerances = shared.EXACT

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        return {"d_input": dims, "d_output": (world_size * dims[0],)}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        return [dims[0]]

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        import torch

        gathered = torch.cat([rank[0].double() for rank in inputs])
        return [(gathered.clone(),) for _ in range(world_size)]

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        return elements_bytes(world_size * dims[0], dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        return elements_bytes((world_size - 1) * dims[0], dtype)
