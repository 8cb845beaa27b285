"""all-gather + GEMM: gather the row shards of A from every rank, multiply by this rank's column shard of B."""

from __future__ import annotations

from typing import Any

import problems.distributed.builtin._collective as shared
from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes


class AllGatherGemm(DistributedProblem):
    slug = "all-gather-gemm"
    title = "All-Gather + GEMM"
    description = (
        "Tensor parallelism's column-parallel layer. Every rank holds an m×k row shard `input_a` of A and its own "
        "k×n column shard `input_b` of the weight. Write into `output_c` ((world_size · m)×n) the product of the "
        "gathered A (the ranks' shards stacked in rank order) with this rank's B: "
        "`output_c = cat(input_a_0, …, input_a_{world_size−1}) @ input_b`. Overlap the gather with the product: the "
        "local shard can be multiplied while the others arrive. Row-major, contiguous, ragged sizes." + shared.CALLING
    )
    tags = ("distributed", "all-gather", "matmul", "compute-bound")
    difficulty = "hard"
    collective = "all-gather"
    score_metric = "gflops"
    parameters = (
        Param("input_a", "input", doc="m×k, this rank's rows of A"),
        Param("input_b", "input", doc="k×n, this rank's columns of the weight"),
        Param("output_c", "output", doc="(world_size · m)×n"),
        Param("m", "scalar", "size_t", "rows of A on each rank"),
        Param("n", "scalar", "size_t", "columns of this rank's B and C"),
        Param("k", "scalar", "size_t", "columns of A, rows of B"),
    )
    gpu_cases = ((127, 1000, 1537), (1024, 2048, 4096), (2048, 3584, 7168))
    cpu_cases = ((3, 5, 7), (9, 17, 33), (17, 33, 65))
    dim_names = ("m", "n", "k")
    flops_formula = "2 · world_size · m · n · k per rank"
    bytes_formula = (
        "S = world_size · m · k · sizeof(dtype) (the gathered A); busbw = S / time · (world_size − 1)/world_size; "
        "the floor: the (world_size − 1) · m · k elements of the peers' shards must reach each rank"
    )
    tolerances = shared.FUSED_GEMM_TOLERANCES

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"input_a": (m, k), "input_b": (k, n), "output_c": (world_size * m, n)}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        return list(dims)

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        import torch

        gathered = torch.cat([rank[0].double() for rank in inputs])
        return [(gathered @ rank[1].double(),) for rank in inputs]

    def flops(self, dims: Dims, world_size: int) -> int:
        m, n, k = dims
        return 2 * world_size * m * n * k

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        m, _, k = dims
        return elements_bytes(world_size * m * k, dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        m, _, k = dims
        return elements_bytes((world_size - 1) * m * k, dtype)
