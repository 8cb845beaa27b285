"""GEMM + reduce-scatter: multiply this rank's K shard, sum the partial products over ranks, keep this rank's rows."""

from __future__ import annotations

from typing import Any

import problems.distributed.builtin._collective as shared
from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes


class GemmReduceScatter(DistributedProblem):
    slug = "gemm-reduce-scatter"
    title = "GEMM + Reduce-Scatter"
    description = (
        "Tensor parallelism's row-parallel layer. Every rank holds `input_a` ((world_size · m)×k, its K shard of "
        "the activations) and `input_b` (k×n, its K shard of the weight). The full product is the sum over ranks of "
        "`input_a_r @ input_b_r`; write into rank r's `output_c` (m×n) rows r·m to (r+1)·m − 1 of it. Overlap the "
        "reduction with the product: a block of rows can be sent while the next is multiplied. Row-major, "
        "contiguous, ragged sizes." + shared.CALLING
    )
    tags = ("distributed", "reduce-scatter", "matmul", "compute-bound")
    difficulty = "hard"
    collective = "reduce-scatter"
    score_metric = "gflops"
    parameters = (
        Param("input_a", "input", doc="(world_size · m)×k, this rank's K shard of A"),
        Param("input_b", "input", doc="k×n, this rank's K shard of B"),
        Param("output_c", "output", doc="m×n: rows rank·m onward of the summed product"),
        Param("m", "scalar", "size_t", "rows of each rank's result"),
        Param("n", "scalar", "size_t", "columns of B and C"),
        Param("k", "scalar", "size_t", "columns of this rank's A, rows of its B"),
    )
    gpu_cases = ((127, 1000, 1537), (1024, 2048, 4096), (1024, 7168, 2048))
    cpu_cases = ((3, 5, 7), (9, 17, 33), (17, 33, 65))
    dim_names = ("m", "n", "k")
    flops_formula = "2 · world_size · m · n · k per rank"
    bytes_formula = (
        "S = world_size · m · n · sizeof(dtype) (each rank's partial product); busbw = S / time · "
        "(world_size − 1)/world_size; the floor: m · n elements must reach each rank (reduced in flight at best)"
    )
    tolerances = shared.FUSED_GEMM_TOLERANCES

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"input_a": (world_size * m, k), "input_b": (k, n), "output_c": (m, n)}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        return list(dims)

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        m = dims[0]
        total = shared.sum_of_ranks([rank[0].double() @ rank[1].double() for rank in inputs])
        return [(total[r * m : (r + 1) * m].clone(),) for r in range(world_size)]

    def flops(self, dims: Dims, world_size: int) -> int:
        m, n, k = dims
        return 2 * world_size * m * n * k

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        m, n, _ = dims
        return elements_bytes(world_size * m * n, dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        m, n, _ = dims
        return elements_bytes(m * n, dtype)
